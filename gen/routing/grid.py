"""Dimension-order routing on HyperX, torus and mesh.

A packet corrects its coordinates one dimension at a time, **lowest dimension first**
(dimension 0 is the slowest-varying coordinate of the row-major node id). Within a dimension:

- HyperX (Ahn et al., SC'09): one hop, straight to the destination's coordinate (every
  dimension is a complete graph), so a path has at most L hops on an L-dimensional HyperX;
- mesh: toward the destination's coordinate, one step at a time;
- torus: the shorter way around the ring. **Tie-break**: when both ways are equally long
  (an even ring and a distance of exactly half of it) the packet goes the *plus* way
  (increasing coordinate, wrapping from ``S-1`` to 0). A ring of size 2 has a single link
  between its two nodes, and both ways use it.

This is PIUMA's "dimension ordered shortest paths in the HyperX" (Allreduce Embedding) and
the classical deadlock-free order for meshes and tori. Every path is a shortest path.
"""

from __future__ import annotations

import numpy as np

from innet.gen.topology import LOCAL, Topology

__all__ = ["DimensionOrder", "grid_coordinates", "is_grid"]


def is_grid(topo: Topology) -> bool:
    """True for a HyperX, torus or mesh built by :mod:`innet.gen.topology.grid`."""
    shape = topo.params.get("shape")
    return (topo.kind in ("hyperx", "torus") and isinstance(shape, tuple)
            and int(np.prod(shape)) == topo.nodes)


def grid_coordinates(topo: Topology) -> np.ndarray:
    """``(N, L)`` coordinates of the nodes of a grid topology (row-major ids)."""
    shape = tuple(topo.params["shape"])
    return np.stack(np.unravel_index(np.arange(topo.nodes), shape), axis=1).astype(np.int64)


class DimensionOrder:
    """Next-hop function of dimension-order routing; see the module docstring."""

    def __init__(self, topo: Topology) -> None:
        if not is_grid(topo):
            raise ValueError(f"Dimension-order routing needs a HyperX, torus or mesh, not "
                             f"{topo.kind}")
        self.topo = topo
        self.shape = np.array(topo.params["shape"], dtype=np.int64)
        self.kind = topo.kind
        self.mesh = bool(topo.params.get("mesh", False))
        self.coords = grid_coordinates(topo)
        dims = len(self.shape)
        self.strides = np.array([int(np.prod(self.shape[d + 1:])) for d in range(dims)])
        if self.kind == "hyperx":
            self.offsets = np.concatenate([[0], np.cumsum(self.shape - 1)[:-1]])
        else:
            self.slot_port = self._slot_ports()

    def _slot_ports(self) -> np.ndarray:
        """``slot_port[u, 2*d + k]``: the port of ``u`` toward its minus (k=0) or plus (k=1)
        neighbour in dimension ``d``; ``-1`` where there is none. Read off the port map."""
        n, dims = self.topo.nodes, len(self.shape)
        peer = self.topo.ports.peer
        ids = np.arange(n)
        out = np.full((n, 2 * dims), -1, dtype=np.int64)
        for d in range(dims):
            x = self.coords[:, d]
            size = self.shape[d]
            for k, step in ((0, -1), (1, 1)):
                y = (x + step) % size
                exists = y != x
                if self.mesh:
                    exists &= (x + step >= 0) & (x + step < size)
                v = ids + (y - x) * self.strides[d]
                match = (peer == v[:, None]) & exists[:, None]
                out[:, 2 * d + k] = np.where(match.any(axis=1), match.argmax(axis=1), -1)
        return out

    def next_port(self, u: np.ndarray, d: np.ndarray) -> np.ndarray:
        cu, cd = self.coords[u], self.coords[d]
        differ = cu != cd
        dim = differ.argmax(axis=1)
        rows = np.arange(len(u))
        x, c = cu[rows, dim], cd[rows, dim]
        if self.kind == "hyperx":
            port = self.offsets[dim] + np.where(c < x, c, c - 1)
        else:
            size = self.shape[dim]
            ahead = (c - x) % size
            if self.mesh:
                plus = c > x
            else:  # shorter way; a tie (ahead == size - ahead) goes plus
                plus = ahead <= size - ahead
            port = self.slot_port[u, 2 * dim + plus.astype(np.int64)]
        return np.where(differ.any(axis=1), port, LOCAL)

    def fill_rows(self, start: int, stop: int, out: np.ndarray) -> None:
        """``out[:] = table[start:stop, :]``: the same rule as :meth:`next_port`, one dimension
        at a time on ``(rows, N)`` blocks, the highest dimension first so that the lowest
        differing dimension is written last and wins."""
        out[:] = LOCAL
        rows = np.arange(start, stop)
        for dim in reversed(range(len(self.shape))):
            size = int(self.shape[dim])
            if size == 1:
                continue
            small = np.int16 if size < 1 << 14 else np.int64
            x = self.coords[start:stop, dim].astype(small)[:, None]
            c = self.coords[:, dim].astype(small)[None, :]
            differ = x != c
            if self.kind == "hyperx":
                port = np.where(c < x, c, c - 1) + small(self.offsets[dim])
            else:
                if self.mesh:
                    plus = c > x
                else:
                    ahead = (c - x) % small(size)
                    plus = ahead <= small(size) - ahead
                minus_port = self.slot_port[rows, 2 * dim][:, None].astype(out.dtype)
                plus_port = self.slot_port[rows, 2 * dim + 1][:, None].astype(out.dtype)
                port = np.where(plus, plus_port, minus_port)
            np.copyto(out, port, where=differ, casting="unsafe")
