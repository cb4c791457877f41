"""Valiant and Compact Valiant intermediate selection (PolarFly, SC'22, Section VII-B).

Valiant routing (Valiant, SIAM J. Comput. 1982) sends each packet minimally to a random
intermediate router ``R_r`` with ``R_r != R_s`` and ``R_r != R_t``, then minimally to its
destination: at most ``2 * diameter`` hops (4 on PolarFly).

Compact Valiant (Section VII-B) draws ``R_r`` from the neighbours of ``R_s`` only, so a PolarFly
path has at most 3 hops; it is used only when ``R_s`` and ``R_t`` are not adjacent, because
for adjacent routers the minimal path from the neighbour could bounce back through ``R_s``.
Adjacent pairs (and packets to their own router) route minimally.

The functions return the intermediate of each packet (``-1`` = route minimally); pass it as
``via`` to :func:`innet.gen.routing.paths` or :func:`innet.gen.routing.link_loads`. The draw
is reproducible from ``seed``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from innet.gen.checks import check_int
from innet.gen.routing.core import check_pairs
from innet.gen.topology import Topology

__all__ = ["VALIANT_MODES", "valiant"]

#: Modes of :func:`valiant`.
VALIANT_MODES = ("valiant", "compact")


def valiant(topo: Topology, src: Any, dst: Any, mode: str = "valiant", *,
            seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """Draw a Valiant intermediate for every ``(src[i], dst[i])`` pair.

    Parameters
    ----------
    topo : Topology
        The network.
    src, dst : int or array of int
        Broadcastable arrays of node ids.
    mode : str
        ``"valiant"``: uniform over all routers except source and destination.
        ``"compact"``: uniform over the neighbours of the source, for non-adjacent pairs only.
    seed : int or numpy Generator, optional
        Seed of the draw (default 0, reproducible); a Generator is used as is.

    Returns
    -------
    ndarray of int64
        Intermediate node per pair, ``-1`` where the pair routes minimally (``src == dst``;
        adjacent pairs in compact mode).

    Raises
    ------
    TypeError
        If ``topo`` is not a Topology, a node id or the seed not an integer.
    ValueError
        If the mode is unknown, a node id is out of range, the pairs do not broadcast
        together, the seed is negative, or plain Valiant is asked of a network with fewer
        than 3 nodes.
    """
    if mode not in VALIANT_MODES:
        raise ValueError(f"Valiant mode must be one of {', '.join(VALIANT_MODES)}, not "
                         f"{mode!r}")
    s, d = (a.reshape(-1) for a in check_pairs(topo, src, dst))
    if isinstance(seed, np.random.Generator):
        rng = seed
    else:
        if seed is not None:
            check_int("Seed", seed, low=0)
        rng = np.random.default_rng(seed)
    n = topo.nodes
    if mode == "valiant":
        if n < 3:
            raise ValueError(f"Valiant routing needs at least 3 nodes, not {n}")
        lo, hi = np.minimum(s, d), np.maximum(s, d)
        r = rng.integers(0, n - 2, size=len(s))
        r = r + (r >= lo)
        r = r + (r >= hi)
        return np.where(s == d, -1, r).astype(np.int64)
    peer = topo.ports.peer
    degree = topo.ports.degree[s].astype(np.int64)
    adjacent = (peer[s] == d[:, None]).any(axis=1)
    pick = (rng.random(len(s)) * np.maximum(degree, 1)).astype(np.int64)
    mid = peer[s, np.minimum(pick, np.maximum(degree - 1, 0))].astype(np.int64)
    return np.where(adjacent | (s == d) | (degree == 0), -1, mid)
