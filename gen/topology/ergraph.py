"""PolarFly: the Erdős-Rényi polarity graph ER_q for every prime power q.

PolarFly (Lakhotia et al., SC'22), Section IV-C/E: the vertices are the left-normalised
vectors of GF(q)^3 (first non-zero entry 1), and two vertices are adjacent when their dot
product is 0; self-orthogonal vertices (quadrics) would carry a self-loop, which is dropped.
N = q^2 + q + 1, every vertex lies on the polar line of q + 1 points, so quadrics have degree
q and all other vertices q + 1 (Section IV-F).

The graph is built line by line, not from an N x N matrix: for each vertex ``a`` the q + 1
points of its polar line ``a^perp`` are ``P + t*Q`` (t in GF(q)) and ``Q`` for two points
``P, Q`` spanning it, left-normalised and turned into ids with table look-ups. Cost O(N*q).
"""

from __future__ import annotations

import numpy as np

from innet.gen.topology.core import Topology, port_map_from_rows
from innet.gen.topology.field import factor_prime_power, field_tables

__all__ = [
    "MAX_Q",
    "QUADRIC",
    "V1",
    "V2",
    "check_q",
    "er_graph",
    "polarfly",
    "vertex_id",
    "vertex_labels",
]

#: The largest q accepted: ER_512 has 262,657 nodes of radix 513 (1 GiB of port map).
MAX_Q = 512

#: Vertex classes (Section IV-F): quadrics W(q), V1(q) adjacent to a quadric, V2(q) the rest.
QUADRIC, V1, V2 = "quadric", "v1", "v2"


def check_q(q: object) -> int:
    """Validate the PolarFly parameter ``q`` and return it as an int.

    Raises
    ------
    TypeError
        If ``q`` is not an integer.
    ValueError
        If ``q`` is outside ``2..MAX_Q`` or not a prime power.
    """
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)):
        raise TypeError(f"q must be an integer, not {q!r:.60}")
    q = int(q)
    if not 2 <= q <= MAX_Q:
        raise ValueError(f"q must be between 2 and {MAX_Q}, not {q}")
    if factor_prime_power(q) is None:
        raise ValueError(f"q must be a prime power, not {q}")
    return q


def vertex_labels(q: int) -> np.ndarray:
    """``(N, 3)`` left-normalised vectors in node-id order.

    Node ids follow the lexicographic order of the vectors (Fig. 4 of the paper):
    ``(0,0,1)`` is 0, ``(0,1,z)`` is ``1 + z``, ``(1,y,z)`` is ``1 + q + y*q + z``.
    """
    t = np.arange(q)
    head = np.array([[0, 0, 1]])
    line = np.stack([np.zeros(q, int), np.ones(q, int), t], axis=1)
    y, z = np.divmod(np.arange(q * q), q)
    body = np.stack([np.ones(q * q, int), y, z], axis=1)
    return np.concatenate([head, line, body])


def vertex_id(q: int, vector) -> np.ndarray:
    """The node id of left-normalised vectors (an ``(..., 3)`` array), see :func:`vertex_labels`."""
    v = np.asarray(vector)
    x0, x1, x2 = v[..., 0], v[..., 1], v[..., 2]
    return np.where(x0 == 1, 1 + q + x1 * q + x2, np.where(x1 == 1, 1 + x2, 0))


def er_graph(q: int) -> tuple[np.ndarray, np.ndarray]:
    """The neighbour lists of ER_q.

    Returns
    -------
    nbr : ndarray of int32, shape (N, q + 1)
        Row ``u`` lists the neighbours of ``u`` in ascending order; a quadric has q neighbours
        and its last entry is ``-1``.
    quadric : ndarray of bool, shape (N,)
        Self-orthogonal vertices.
    """
    f = field_tables(q)
    n = q * q + q + 1
    add, mul, neg, inv = (a.astype(np.int32) for a in (f.add, f.mul, f.neg, f.inv))
    t = np.arange(q, dtype=np.int32)
    mul_rows = mul.reshape(q, q)
    nbr = np.empty((n, q + 1), dtype=np.int32)
    base = 1 + q  # id of (1, 0, 0)

    # a = (0, 0, 1): the line x2 = 0 holds (1, t, 0) and (0, 1, 0).
    nbr[0, :q] = base + t * q
    nbr[0, q] = 1
    # a = (0, 1, a2): (1, -a2*t, t) and (0, -a2, 1).
    a2 = t
    nbr[1 : 1 + q, :q] = base + neg[mul_rows[a2]] * q + t[None, :]
    na2 = neg[a2]
    nbr[1 : 1 + q, q] = np.where(na2 != 0, 1 + inv[na2], 0)
    # a = (1, y, z): (-(y + z*t), 1, t) and (-z, 0, 1).
    # x0[y, z, t] = -(y + z*t); normalised by 1/x0 when x0 != 0, else the vector is (0, 1, t).
    for y in range(q):  # q slices of q*q keep the temporaries small
        x0 = neg[add[y * q + mul_rows]]  # (z, t)
        ix = inv[x0]
        rows = nbr[base + y * q : base + (y + 1) * q]
        rows[:, :q] = np.where(x0 != 0, base + ix * q + mul[t[None, :] * q + ix], 1 + t[None, :])
    z = np.tile(t, q)
    nz = neg[z]
    nbr[base:, q] = np.where(nz != 0, base + inv[nz], 0)

    # Drop the self-loops of quadrics, sort every row, pad quadric rows with -1.
    ids = np.arange(n, dtype=np.int32)[:, None]
    loop = nbr == ids
    quadric = loop.any(axis=1)
    nbr[loop] = n
    nbr.sort(axis=1)
    nbr[nbr == n] = -1
    return nbr, quadric


def polarfly(q: int, *, r0: int = 0, r1: int = 0, starter: int | None = None) -> Topology:
    """PolarFly ER_q (Lakhotia et al., SC'22, Section IV), optionally expanded (Section VI).

    Node ids are the lexicographic order of the left-normalised vectors (see
    :func:`vertex_labels`); a node's label is its vector ``(x0, x1, x2)`` with entries as
    integers of GF(q) (residues for prime q; polynomial coefficients in base p otherwise).
    ``classes[u]`` is ``"quadric"`` (W(q)), ``"v1"`` (adjacent to a quadric) or ``"v2"``.

    Port order: ascending neighbour id. Expansions keep every original port and append new
    links on the next free ports (see :func:`innet.gen.topology.expansion.expand`).

    Parameters
    ----------
    q : int
        A prime power, ``2 <= q <= MAX_Q``.
    r0 : int
        Replications of the quadric cluster (Section VI-A), ``>= 0``.
    r1 : int
        Non-quadric clusters replicated round-robin (Section VI-B), ``0 <= r1 <= q``; odd q.
    starter : int, optional
        The starter quadric of the layout the expansions follow (default: the lowest id).

    Raises
    ------
    TypeError
        If ``q`` is not an integer.
    ValueError
        If ``q`` is out of range or not a prime power; for bad expansion parameters see
        :func:`innet.gen.topology.expansion.expand`.
    """
    from innet.gen.topology.expansion import check_expansion, expand

    q = check_q(q)
    r0, r1 = check_expansion(q, r0, r1)  # before ER_q is built, which takes seconds for a large q
    nbr, quadric = er_graph(q)
    adjacent = quadric[np.where(nbr >= 0, nbr, 0)] & (nbr >= 0)
    v1 = ~quadric & adjacent.any(axis=1)
    classes = np.where(quadric, QUADRIC, np.where(v1, V1, V2))
    topo = Topology(kind="polarfly", params={"q": q, "r0": 0, "r1": 0},
                    labels=tuple(map(tuple, vertex_labels(q).tolist())),
                    ports=port_map_from_rows(nbr),
                    classes=tuple(classes.tolist()))
    if r0 or r1 or starter is not None:
        topo = expand(topo, r0=r0, r1=r1, starter=starter)
    return topo
