"""Root selection for the dynamic embedding (PIUMA, "Allreduce Embedding: Reduction Tree").

PIUMA maps the root "to a switch within the minimum eccentricity participant node", where the
eccentricity of a node is its largest distance to the others; here (as in the verifier) it is
measured over the participants only. Candidates are the participants themselves (PIUMA: "it
is advisable to map the root on a node participating in that Allreduce").

**Tie-break**, in order (the *root key*):

1. minimum eccentricity over the participants (the tree depth);
2. minimum total distance to the participants (fewest link traversals, less traffic);
3. on HyperX, torus and mesh: closest to the middle of the grid, ``sum |2*x_d - (S_d - 1)|``
   (PIUMA maps the global root "to the node at midpoint coordinates in each dimension",
   Fig. 2);
4. lowest node id.

Distances use closed forms where the family has one (see
:func:`innet.gen.routing.hop_distances`); with failures they come from breadth-first search on
what remains, and the undamaged key (a lower bound, since failures only lengthen paths) prunes
the candidates.
"""

from __future__ import annotations

import numpy as np

from innet.gen.routing import bfs_distances, hop_distances
from innet.gen.routing.grid import grid_coordinates, is_grid
from innet.gen.routing.polarfly import is_er_graph
from innet.gen.topology import Topology

__all__ = ["root_keys", "select_root"]

#: Pairwise distance entries per block when eccentricities are computed pair by pair.
_PAIR_ENTRIES = 1 << 21


def _centre(topo: Topology, nodes: np.ndarray) -> np.ndarray:
    if not is_grid(topo):
        return np.zeros(len(nodes), dtype=np.int64)
    shape = np.array(topo.params["shape"], dtype=np.int64)
    return np.abs(2 * grid_coordinates(topo)[nodes] - (shape - 1)).sum(axis=1)


def _grid_full(topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Eccentricity and total distance of every node over all nodes of a grid (a Cartesian
    product: both are sums over dimensions of the 1-D quantities)."""
    shape = tuple(topo.params["shape"])
    n = topo.nodes
    coords = grid_coordinates(topo)
    ecc = np.zeros(n, dtype=np.int64)
    total = np.zeros(n, dtype=np.int64)
    for d, size in enumerate(shape):
        x = np.arange(size)
        delta = np.abs(x[:, None] - x[None, :])
        if topo.kind == "hyperx":
            dist = (delta != 0).astype(np.int64)
        elif topo.params.get("mesh", False):
            dist = delta
        else:
            dist = np.minimum(delta, size - delta)
        ecc += dist.max(axis=1)[coords[:, d]]
        total += (n // size) * dist.sum(axis=1)[coords[:, d]]
    return ecc, total


def _hyperx_subset(topo: Topology, cands: np.ndarray, parts: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Eccentricity and total distance over a participant subset of a HyperX, by counting.

    HyperX distance is ``L - matches`` (coordinates that agree). With ``M_S(c)`` the number of
    participants agreeing with ``c`` on every dimension of ``S``, inclusion-exclusion gives the
    number agreeing on exactly ``k`` dimensions, ``sum_{|S| >= k} (-1)^(|S|-k) C(|S|, k)
    M_S(c)``; the eccentricity is ``L - (least k with a participant)``. ``O(2^L * |P|)``.
    """
    from itertools import combinations
    from math import comb

    shape = np.array(topo.params["shape"], dtype=np.int64)
    dims = len(shape)
    coords = grid_coordinates(topo)
    exactly = np.zeros((dims + 1, len(cands)), dtype=np.int64)
    singles = np.zeros(len(cands), dtype=np.int64)
    for size in range(dims + 1):
        for subset in combinations(range(dims), size):
            sub = list(subset)
            radix = np.cumprod(np.r_[1, shape[sub][:-1]]) if sub else np.zeros(0, np.int64)
            keys_p = coords[parts][:, sub] @ radix if sub else np.zeros(len(parts), np.int64)
            keys_c = coords[cands][:, sub] @ radix if sub else np.zeros(len(cands), np.int64)
            uniq, counts = np.unique(keys_p, return_counts=True)
            at = np.clip(np.searchsorted(uniq, keys_c), 0, len(uniq) - 1)
            m = np.where(uniq[at] == keys_c, counts[at], 0)
            if size == 1:
                singles += m
            for k in range(size + 1):
                exactly[k] += (-1) ** (size - k) * comb(size, k) * m
    least = np.argmax(exactly > 0, axis=0)
    return dims - least, dims * len(parts) - singles


def _undamaged(topo: Topology, cands: np.ndarray, parts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Eccentricity and total distance of each candidate over ``parts`` (no failures)."""
    if len(parts) == topo.nodes and is_grid(topo):
        ecc, total = _grid_full(topo)
        return ecc[cands], total[cands]
    if is_grid(topo) and topo.kind == "hyperx" and len(topo.params["shape"]) <= 8:
        return _hyperx_subset(topo, cands, parts)
    if is_er_graph(topo):
        member = np.zeros(topo.nodes, dtype=bool)
        member[parts] = True
        peer = topo.ports.peer[cands]
        near = (member[np.where(peer >= 0, peer, 0)] & (peer >= 0)).sum(axis=1)
        others = len(parts) - member[cands].astype(np.int64)  # participants other than c
        ecc = np.where(others == 0, 0, np.where(near == others, 1, 2))
        return ecc, 2 * others - near
    ecc = np.empty(len(cands), dtype=np.int64)
    total = np.empty(len(cands), dtype=np.int64)
    block = max(1, _PAIR_ENTRIES // max(len(parts), 1))
    for start in range(0, len(cands), block):
        c = cands[start:start + block]
        dist = hop_distances(topo, c[:, None], parts[None, :])
        ecc[start:start + block] = dist.max(axis=1)
        total[start:start + block] = dist.sum(axis=1)
    return ecc, total


def root_keys(topo: Topology, participants: np.ndarray, candidates: np.ndarray | None = None
              ) -> np.ndarray:
    """The root key ``(eccentricity, total distance, centre offset, id)`` of each candidate
    (default: the participants) over the participants, without failures; ``(k, 4)`` int64."""
    parts = np.asarray(participants, dtype=np.int64)
    cands = parts if candidates is None else np.asarray(candidates, dtype=np.int64)
    ecc, total = _undamaged(topo, cands, parts)
    return np.stack([ecc, total, _centre(topo, cands), cands], axis=1)


def select_root(topo: Topology, participants: np.ndarray, alive: np.ndarray | None = None
                ) -> tuple[int, np.ndarray]:
    """The root by the root key, and its hop distances to every node.

    Parameters
    ----------
    topo : Topology
        The network.
    participants : array of int
        Participant node ids (the candidates).
    alive : array of bool, shape (N, radix), optional
        Usable ports (:func:`innet.gen.routing.alive_ports`) when there are failures.

    Returns
    -------
    root : int
        The chosen root.
    dist : ndarray of int32, shape (N,)
        Hop distance from the root to every node on the usable network (``-1``: unreachable).
        With failures the root is chosen first to reach as many participants as possible.
    """
    parts = np.asarray(participants, dtype=np.int64)
    keys = root_keys(topo, parts)
    order = np.lexsort(keys.T[::-1])
    if alive is None:
        root = int(keys[order[0], 3])
        return root, hop_distances(topo, root, np.arange(topo.nodes)).astype(np.int32)
    best_key: tuple | None = None
    best: tuple[int, np.ndarray] | None = None
    for i in order:
        bound = (0, *keys[i].tolist())
        if best_key is not None and bound >= best_key:
            break
        cand = int(keys[i, 3])
        dist = bfs_distances(topo, cand, alive)
        reach = dist[parts]
        missed = int((reach < 0).sum())
        ok = reach[reach >= 0]
        key = (missed, int(ok.max(initial=0)), int(ok.sum()), int(keys[i, 2]), cand)
        if best_key is None or key < best_key:
            best_key, best = key, (cand, dist)
    assert best is not None
    return best
