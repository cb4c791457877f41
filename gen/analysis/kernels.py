"""Compiled graph kernels (numba) on peer arrays.

A graph is an ``(N, R)`` integer array ``peer``: row ``u`` lists the neighbours of ``u``;
negative entries are absent links (anywhere in the row, so failed links can be masked out in
place). Every kernel is exact; numba keeps the loops at C speed (triangles of PolarFly q=251,
2.6 million of them among 8 million links, take seconds instead of minutes with numpy
gathers).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["bfs_counts", "connected_suffix", "triangles_by_group"]

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@numba.njit(cache=True, nogil=True)
def _popcount(x: np.uint64) -> int:  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return int((x * _H01) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def bfs_counts(peer: np.ndarray, sources: np.ndarray) -> tuple[np.ndarray, int]:  # pragma: no cover
    """Breadth-first search from every source at once, 64 sources per machine word.

    Returns ``(counts, reached)``: ``counts[d]`` is the number of (source, node) pairs at
    distance ``d`` (``counts[0]`` = the number of sources), ``reached`` the number of pairs
    with a path (sources included). Work: ``N * R * ceil(S / 64)`` word operations per level.
    """
    n, radix = peer.shape
    words = (len(sources) + 63) // 64
    frontier = np.zeros((n, words), dtype=np.uint64)
    visited = np.zeros((n, words), dtype=np.uint64)
    nxt = np.zeros((n, words), dtype=np.uint64)
    for i in range(len(sources)):
        bit = np.uint64(1) << np.uint64(i % 64)
        frontier[sources[i], i // 64] |= bit
        visited[sources[i], i // 64] |= bit
    counts = np.zeros(n + 1, dtype=np.int64)
    counts[0] = len(sources)
    reached = len(sources)
    acc = np.zeros(words, dtype=np.uint64)
    depth = 0
    while True:
        found = 0
        for u in range(n):
            acc[:] = 0
            for p in range(radix):
                v = peer[u, p]
                if v >= 0:
                    for w in range(words):
                        acc[w] |= frontier[v, w]
            for w in range(words):
                fresh = acc[w] & ~visited[u, w]
                nxt[u, w] = fresh
                if fresh:
                    found += _popcount(fresh)
        if found == 0:
            break
        depth += 1
        counts[depth] = found
        reached += found
        for u in range(n):
            for w in range(words):
                visited[u, w] |= nxt[u, w]
        frontier, nxt = nxt, frontier
    return counts[: depth + 1], reached


@numba.njit(cache=True, nogil=True)
def triangles_by_group(peer: np.ndarray, group: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Count triangles by how many distinct groups their corners are in.

    Returns ``[one group, two groups, three groups]``. Forward algorithm: each triangle
    ``u < v < w`` is found once, from ``u``, with a mark array over ``N(u)``.
    """
    n, radix = peer.shape
    mark = np.zeros(n, dtype=np.bool_)
    out = np.zeros(3, dtype=np.int64)
    for u in range(n):
        for p in range(radix):
            if peer[u, p] > u:
                mark[peer[u, p]] = True
        for p in range(radix):
            v = peer[u, p]
            if v <= u:
                continue
            for k in range(radix):
                w = peer[v, k]
                if w > v and mark[w]:
                    gu, gv, gw = group[u], group[v], group[w]
                    if gu == gv and gv == gw:
                        out[0] += 1
                    elif gu != gv and gv != gw and gu != gw:
                        out[2] += 1
                    else:
                        out[1] += 1
        for p in range(radix):
            if peer[u, p] > u:
                mark[peer[u, p]] = False
    return out


@numba.njit(cache=True, nogil=True)
def connected_suffix(n: int, edges: np.ndarray) -> int:  # pragma: no cover
    """The largest ``k`` such that ``edges[k:]`` connects all ``n`` nodes, or -1 if even all
    edges do not. Union-find, adding edges from the end."""
    parent = np.arange(n)
    components = n
    for k in range(len(edges) - 1, -1, -1):
        a, b = edges[k, 0], edges[k, 1]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            parent[a] = b
            components -= 1
            if components == 1:
                return k
    return -1 if components > 1 else len(edges)
