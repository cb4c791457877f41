"""Multi-tree embeddings: one vector striped over T trees with different roots.

PIUMA names this as future work ("Conclusion": "employing multiple embeddings that
concurrently compute disjoint segments of the output vector"). Each tree is a dynamic
embedding (:func:`innet.gen.embed.embed`) on its own collective id and carries one share of the
vector; trees on different ids may share links, and a channel shared by several trees carries
the sum of their shares.

Roots: the first is the usual root (:mod:`innet.gen.embed.root`); each next one is chosen
among the best-ranked remaining participants of the smallest eccentricity available (so every
tree keeps the minimum depth where possible) to minimise, in order, the largest channel load,
the sum of squared channel loads, and the root key.

Loads count both direction classes on each directed channel: the requests of a tree cross
child to parent, its responses parent to child (PIUMA: "duplex communication for
simultaneous data transfer on both reduction and broadcast trees").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from innet.gen.checks import check_int
from innet.gen.embed.cost import Cost, CostModel, embedding_cost
from innet.gen.embed.dynamic import (
    _routing,
    check_collective_id,
    check_kind,
    check_participants,
    embed,
    tree_ports,
)
from innet.gen.embed.root import root_keys
from innet.gen.embed.types import Embedding
from innet.gen.routing import alive_ports, bfs_distances, hop_distances, parse_failures
from innet.gen.topology import Topology, check_topology

__all__ = ["Striping", "stripe"]

#: Root candidates examined per added tree.
_CANDIDATES = 32


@dataclass(frozen=True)
class Striping:
    """T embeddings that share one vector.

    Members
    -------
    embeddings : tuple of Embedding
        One per tree, on collective ids ``first_id, first_id + 1, ...``.
    shares : tuple of float
        Fraction of the vector each tree carries (equal shares, summing to 1).
    loads : tuple of (int, int, float)
        ``(node, port, load)`` for every directed channel used: the fraction of the vector it
        carries, requests and responses of all trees together; ascending.
    max_link_load : float
        The largest channel load (1.0 for a single tree).
    predicted_gain : float
        ``T_single(m) / T_striped(m)`` for large ``m`` under the cost model: the bandwidth
        speed-up over one tree (the ratio of the beta terms).
    cost : Cost
        The striped collective: alpha of the slowest tree, beta of the busiest channel.
    """

    embeddings: tuple[Embedding, ...]
    shares: tuple[float, ...]
    loads: tuple[tuple[int, int, float], ...]
    max_link_load: float
    predicted_gain: float
    cost: Cost

    def element_ranges(self, elements: int) -> tuple[tuple[int, int], ...]:
        """Half-open element ranges of each tree for a vector of ``elements`` (contiguous,
        covering it exactly, each tree's size its share of it rounded).

        Raises
        ------
        TypeError, ValueError
            If ``elements`` is not a non-negative integer.
        """
        elements = check_int("Elements", elements, low=0)
        # Exact rationals: a float product rounds wrongly past 2^53 elements.
        inner = [round(elements * Fraction(sum(self.shares[:i])))
                 for i in range(1, len(self.shares))]
        bounds = [0, *(min(max(b, 0), elements) for b in inner), elements]
        return tuple(itertools.pairwise(bounds))

    def load_array(self, topo: Topology) -> np.ndarray:
        """The loads as an ``(N, radix)`` float array."""
        out = np.zeros((topo.nodes, max(topo.radix, 1)))
        for u, p, load in self.loads:
            out[u, p] = load
        return out


def _channel_ids(topo: Topology, nodes: np.ndarray, ports: np.ndarray) -> np.ndarray:
    """Flat channel ids ``u * radix + p`` for both directions of each tree link
    ``(nodes[i], ports[i])``."""
    radix = max(topo.radix, 1)
    v = topo.ports.peer[nodes, ports].astype(np.int64)
    q = topo.ports.peer_port[nodes, ports].astype(np.int64)
    return np.concatenate([nodes * radix + ports, v * radix + q])


def _tree_links(topo: Topology, root: int, parts: np.ndarray, ports: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    from innet.gen.embed.dynamic import _tree_nodes

    nodes = _tree_nodes(topo, root, parts, ports)
    child = nodes[nodes != root]
    return child, ports[child].astype(np.int64)


def stripe(topo: Topology, trees: int, participants: Iterable[int] | None = None, *,
           kind: str = "allreduce", op: Any = "add", dtype: Any = "int32",
           first_id: int = 0, roots: Iterable[int] | None = None,
           failed_links: Iterable[Any] | None = None,
           failed_switches: Iterable[int] | None = None,
           model: CostModel | None = None) -> Striping:
    """Stripe one collective over ``trees`` embeddings with different roots.

    Parameters
    ----------
    topo : Topology
        The network.
    trees : int
        Number of trees, at least 1 and at most the number of participants.
    participants, kind, op, dtype, failed_links, failed_switches
        As :func:`innet.gen.embed.embed`.
    first_id : int
        Collective id of the first tree; tree ``t`` uses ``first_id + t``.
    roots : iterable of int, optional
        The roots, one per tree (default: chosen as in the module docstring).
    model : CostModel, optional
        For the predicted gain (default :class:`CostModel()`).

    Raises
    ------
    TypeError, ValueError
        As :func:`innet.gen.embed.embed`; ``ValueError`` if ``trees`` is out of range or the
        roots are not ``trees`` distinct nodes.
    """
    check_topology(topo)
    if isinstance(trees, bool) or not isinstance(trees, (int, np.integer)):
        raise TypeError(f"Trees must be an integer, not {trees!r:.60}")
    check_kind(kind)
    links, dead = parse_failures(topo, failed_links, failed_switches)
    parts = check_participants(topo, participants, dead)
    if not 1 <= trees <= len(parts):
        raise ValueError(f"Trees must be between 1 and the number of participants "
                         f"({len(parts)}), not {trees}")
    check_collective_id(first_id)
    check_collective_id(first_id + trees - 1)
    if roots is not None:
        chosen = list(roots)
        if len(chosen) != trees or len(set(chosen)) != trees:
            raise ValueError(f"Roots must be {trees} distinct nodes, not {chosen!r}")
    else:
        chosen = _choose_roots(topo, trees, parts, links, dead)
    embeddings = tuple(
        embed(topo, parts.tolist(), root=r, kind=kind, op=op, dtype=dtype,
              collective_id=first_id + t, failed_links=links, failed_switches=dead)
        for t, r in enumerate(chosen))
    shares = tuple(1.0 / trees for _ in range(trees))
    radix = max(topo.radix, 1)
    load = np.zeros(topo.nodes * radix)
    for e, share in zip(embeddings, shares, strict=True):
        if not e.links:
            continue
        arr = np.array(e.links, dtype=np.int64)
        ids = _channel_ids(topo, arr[:, 0], arr[:, 1])
        classes = {"reduce": ids[: len(arr)], "broadcast": ids[len(arr):]}
        np.add.at(load, classes.get(e.kind, ids), share)
    used = np.flatnonzero(load > 0)
    loads = tuple((int(i // radix), int(i % radix), float(load[i])) for i in used)
    max_load = float(load.max(initial=0.0))
    model = model if model is not None else CostModel()
    costs = [embedding_cost(e, topo, model) for e in embeddings]
    striped = Cost(alpha=max(c.alpha for c in costs),
                   beta=model.beta(link_load=max(max_load, 1e-12)))
    return Striping(embeddings=embeddings, shares=shares, loads=loads,
                    max_link_load=max_load, predicted_gain=costs[0].beta / striped.beta,
                    cost=striped)


def _choose_roots(topo: Topology, trees: int, parts: np.ndarray, links: tuple,
                  dead: tuple) -> list[int]:
    """Greedy root choice (see the module docstring)."""
    keys = root_keys(topo, parts)
    order = np.lexsort(keys.T[::-1])
    alive = alive_ports(topo, links, dead) if (links or dead) else None
    radix = max(topo.radix, 1)
    load = np.zeros(topo.nodes * radix)
    chosen: list[int] = []
    ranked = keys[order]
    routing = _routing(topo)
    for _ in range(trees):
        remaining = ranked[~np.isin(ranked[:, 3], chosen)]
        best_ecc = remaining[0, 0]
        pool = remaining[remaining[:, 0] == best_ecc][:_CANDIDATES]
        if len(pool) < min(_CANDIDATES, len(remaining)):
            pool = remaining[:_CANDIDATES]
        best = None
        for rank, key in enumerate(pool):
            root = int(key[3])
            if alive is None:
                dist = hop_distances(topo, root, np.arange(topo.nodes))
            else:
                dist = bfs_distances(topo, root, alive)
            if (dist[parts] < 0).any():
                continue
            ports = tree_ports(topo, root, dist, alive, routing.column(root))
            child, up = _tree_links(topo, root, parts, ports)
            trial = load.copy()
            np.add.at(trial, _channel_ids(topo, child, up), 1.0)
            score = (float(trial.max(initial=0)), float((trial ** 2).sum()), rank)
            if best is None or score < best[0]:
                best = (score, root, trial)
            if not chosen:
                break  # the first tree is the usual root
        if best is None:
            break
        chosen.append(best[1])
        load = best[2]
    if len(chosen) < trees:
        raise ValueError(f"Only {len(chosen)} participants can root a tree that reaches every "
                         f"participant; {trees} trees were asked for")
    return chosen
