"""PolarFly minimal routing by the cross product (PolarFly, SC'22, Section IV-D).

ER_q has diameter 2 and exactly one minimal path between any two vertices (Property 1.4).
Vertices ``s`` and ``d`` are adjacent exactly when ``s . d = 0``; otherwise the unique
intermediate vertex ``v`` of the 2-hop path is orthogonal to both, so it is the cross product

    v = s x d = (s1*d2 - s2*d1, s2*d0 - s0*d2, s0*d1 - s1*d0)        (Eq. 2)

left-normalised (first non-zero entry 1). The next hop at ``s`` toward ``d`` is therefore ``d``
itself when ``s . d = 0`` and ``v`` otherwise; the port is the one of ``s`` wired to it.

Everything runs on whole arrays of (source, destination) pairs over GF(q): residues for a
prime q, the field tables of :mod:`innet.gen.topology.field` for other prime powers.
"""

from __future__ import annotations

import numpy as np

from innet.gen.topology import LOCAL, Topology
from innet.gen.topology.field import field_tables

__all__ = ["CrossProduct", "cross_product_hop", "is_er_graph"]


def is_er_graph(topo: Topology) -> bool:
    """True for an unexpanded PolarFly ER_q built by :func:`innet.gen.topology.polarfly`."""
    if topo.kind != "polarfly":
        return False
    params = topo.params
    q = params.get("q")
    if not isinstance(q, int) or params.get("r0", 0) or params.get("r1", 0):
        return False
    return topo.nodes == q * q + q + 1 and all(len(label) == 3 for label in topo.labels[:1])


class _Field:
    """GF(q) arithmetic on integer arrays: modular for prime q, table look-ups otherwise."""

    def __init__(self, q: int) -> None:
        tables = field_tables(q)
        self.q = q
        self.prime = tables.m == 1
        self.inv = tables.inv.astype(np.int32)
        if not self.prime:
            self.add_t = tables.add.astype(np.int32)
            self.mul_t = tables.mul.astype(np.int32)
            self.neg_t = tables.neg.astype(np.int32)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.prime:
            return a * b % self.q
        return self.mul_t[a * self.q + b]

    def sub_mul(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``a*b - c*d``."""
        if self.prime:
            return (a * b - c * d) % self.q
        q = self.q
        return self.add_t[self.mul_t[a * q + b] * q + self.neg_t[self.mul_t[c * q + d]]]

    def dot(self, s: tuple, d: tuple) -> np.ndarray:
        if self.prime:
            q = self.q
            return ((s[0] * d[0] + s[1] * d[1]) % q + s[2] * d[2]) % q
        q = self.q
        m = self.mul_t
        return self.add_t[self.add_t[m[s[0] * q + d[0]] * q + m[s[1] * q + d[1]]] * q
                          + m[s[2] * q + d[2]]]


def cross_product_hop(field: _Field, s: tuple, d: tuple, d_id: np.ndarray) -> np.ndarray:
    """The node id of the next hop from vertex ``s`` to vertex ``d`` (arrays of coordinates).

    ``d`` itself where ``s . d = 0``, else the left-normalised ``s x d`` (Eq. 2). Where
    ``s == d`` the result is meaningless (the caller masks it).
    """
    q = field.q
    c0 = field.sub_mul(s[1], d[2], s[2], d[1])
    c1 = field.sub_mul(s[2], d[0], s[0], d[2])
    c2 = field.sub_mul(s[0], d[1], s[1], d[0])
    # Left-normalise: divide by the first non-zero entry; ids follow vertex_labels:
    # (1, y, z) -> 1 + q + y*q + z, (0, 1, z) -> 1 + z, (0, 0, 1) -> 0.
    lead = np.where(c0 != 0, c0, c1)
    inv = field.inv[lead]
    y = field.mul(c1, inv)
    z = field.mul(c2, inv)
    hop = np.where(c0 != 0, 1 + q + y * q + z, np.where(c1 != 0, 1 + z, 0))
    return np.where(field.dot(s, d) == 0, d_id, hop)


class CrossProduct:
    """Next-hop function of PolarFly ER_q (Section IV-D); see the module docstring."""

    def __init__(self, topo: Topology) -> None:
        if not is_er_graph(topo):
            raise ValueError(f"Cross-product routing needs an unexpanded PolarFly, not "
                             f"{topo.kind} with params {dict(topo.params)}")
        self.topo = topo
        self.q = int(topo.params["q"])
        self.field = _Field(self.q)
        labels = np.asarray(topo.labels, dtype=np.int32)
        self.coords = tuple(np.ascontiguousarray(labels[:, i]) for i in range(3))
        n = topo.nodes
        peer = topo.ports.peer.astype(np.int64)
        radix = peer.shape[1]
        # Sorted (node, neighbour) keys for a vectorised port look-up of arbitrary pairs.
        keys = np.where(peer >= 0, np.arange(n)[:, None] * (n + 1) + peer, -1)
        order = np.argsort(keys, axis=None, kind="stable")
        self.keys = keys.reshape(-1)[order]
        self.key_port = (order % radix).astype(np.int32)
        self.peer = topo.ports.peer
        self._lut: _CrossLUT | None = None

    def _coords(self, ids: np.ndarray) -> tuple:
        return tuple(c[ids] for c in self.coords)

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        hop = cross_product_hop(self.field, self._coords(u), self._coords(d), d)
        n = self.topo.nodes
        idx = np.searchsorted(self.keys, u * (n + 1) + hop)
        idx = np.minimum(idx, len(self.keys) - 1)
        return np.where(u == d, LOCAL, self.key_port[idx]).astype(np.int64)

    def fill_rows(self, start: int, stop: int, out: np.ndarray) -> None:
        """``out[:] = table[start:stop, :]`` (one block of sources against every destination)."""
        n = self.topo.nodes
        if self._lut is None and self.field.prime and self.q <= _LUT_MAX_Q:
            self._lut = _CrossLUT(self.q, self.coords)
        if self._lut is not None:
            hop = self._lut.hops(start, stop)
        else:
            s = tuple(c[start:stop, None] for c in self.coords)
            d = tuple(c[None, :] for c in self.coords)
            hop = cross_product_hop(self.field, s, d, np.arange(n, dtype=np.int32)[None, :])
        # Per-block inverse port map: only neighbour entries are ever written or read.
        inv = np.empty((stop - start, n), dtype=out.dtype)
        peer = self.peer[start:stop]
        local_rows, ports = np.nonzero(peer >= 0)
        inv[local_rows, peer[local_rows, ports]] = ports
        out[:] = np.take_along_axis(inv, hop.astype(np.intp, copy=False), axis=1)
        rows = np.arange(start, stop)
        out[rows - start, rows] = LOCAL


#: Largest prime q whose whole table uses :class:`_CrossLUT` (q**3 look-up entries).
_LUT_MAX_Q = 256


class _CrossLUT:
    """Eq. 2 for a block of sources against all destinations with look-up tables (prime q).

    The same arithmetic as :func:`cross_product_hop`, arranged for speed: the products
    ``s_i * d_j`` are small integers, so the reductions modulo q and the left-normalisation are
    table look-ups instead of divisions. ``vid[(c0*q + c1)*q + c2]`` is the vertex id of the
    normalised vector ``(c0, c1, c2)``.
    """

    def __init__(self, q: int, coords: tuple) -> None:
        from innet.gen.topology.ergraph import vertex_id

        self.q = q
        small = 2 * (q - 1) ** 2 < np.iinfo(np.int16).max
        self.dtype = np.int16 if small else np.int32
        self.off = self.dtype((q - 1) ** 2)  # shifts differences of products to >= 0
        inv = field_tables(q).inv.astype(np.int64)
        c = np.stack(np.unravel_index(np.arange(q ** 3), (q, q, q)), axis=1)
        lead = np.where(c[:, 0] != 0, c[:, 0], np.where(c[:, 1] != 0, c[:, 1], c[:, 2]))
        self.vid = vertex_id(q, c * inv[lead][:, None] % q).astype(np.int32)
        residue = np.arange(-int(self.off), 2 * int(self.off) + 1) % q
        self.mod = residue.astype(np.int32)
        self.mod_qq = (residue * q * q).astype(np.int32)
        self.mod_q = (residue * q).astype(np.int32)
        self.is_zero = residue == 0
        self.coords = tuple(c.astype(self.dtype) for c in coords)
        self.dest = tuple(c[None, :] for c in self.coords)
        self.ids = np.arange(len(coords[0]), dtype=np.int32)[None, :]

    def hops(self, start: int, stop: int) -> np.ndarray:
        s0, s1, s2 = (c[start:stop, None] for c in self.coords)
        d0, d1, d2 = self.dest
        off = self.off
        c0 = s1 * d2
        c0 -= s2 * d1
        c0 += off
        c1 = s2 * d0
        c1 -= s0 * d2
        c1 += off
        c2 = s0 * d1
        c2 -= s1 * d0
        c2 += off
        index = self.mod_qq.take(c0)
        index += self.mod_q.take(c1)
        index += self.mod.take(c2)
        hop = self.vid.take(index)
        dot = s0 * d0
        dot += s1 * d1
        dot += off
        dot = self.mod.take(dot).astype(self.dtype)
        dot += s2 * d2
        dot += off
        np.copyto(hop, np.broadcast_to(self.ids, hop.shape), where=self.is_zero.take(dot))
        return hop
