"""Hop distances between node pairs, by closed form where the family has one.

- PolarFly ER_q (PolarFly, SC'22, Section IV-D): 0 for the same vertex, 1 when the dot product
  of the two vectors is 0, else 2.
- HyperX: the number of coordinates that differ (Ahn et al., SC'09).
- torus: the sum over dimensions of ``min(|dx|, S - |dx|)``; mesh: the sum of ``|dx|``.
- anything else: breadth-first search from each distinct source.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from innet.gen.routing.core import check_pairs
from innet.gen.topology import Topology

__all__ = ["hop_distances"]


def hop_distances(topo: Topology, src: Any, dst: Any) -> np.ndarray:
    """Hop distance of every ``(src[i], dst[i])`` pair (broadcast), as int64.

    Raises
    ------
    TypeError, ValueError
        If ``topo`` is not a Topology, a node id is not an integer or out of range, or the
        shapes do not broadcast together.
    """
    from innet.gen.routing.generic import bfs_distances
    from innet.gen.routing.grid import grid_coordinates, is_grid
    from innet.gen.routing.polarfly import _Field, is_er_graph

    s, d = check_pairs(topo, src, dst)
    if is_er_graph(topo):
        labels = np.asarray(topo.labels, dtype=np.int64)
        field = _Field(int(topo.params["q"]))
        a = tuple(labels[s, i] for i in range(3))
        b = tuple(labels[d, i] for i in range(3))
        return np.where(s == d, 0, np.where(field.dot(a, b) == 0, 1, 2)).astype(np.int64)
    if is_grid(topo):
        coords = grid_coordinates(topo)
        delta = np.abs(coords[s] - coords[d])
        if topo.kind == "hyperx":
            return (delta != 0).sum(axis=-1)
        if topo.params.get("mesh", False):
            return delta.sum(axis=-1)
        shape = np.array(topo.params["shape"], dtype=np.int64)
        return np.minimum(delta, shape - delta).sum(axis=-1)
    sources, inverse = np.unique(s, return_inverse=True)
    table = bfs_distances(topo, sources).astype(np.int64)
    return table[inverse.reshape(s.shape), d]
