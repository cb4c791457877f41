"""Grid topologies: HyperX (all-to-all per dimension), torus and mesh.

Both are Cartesian products of one-dimensional graphs: HyperX of complete graphs ``K_S``
(Ahn et al., "HyperX", SC'09; the Flattened Butterfly is its special case), torus of rings and
mesh of paths. Node ids are row-major (C-order) indices of the coordinates, and a node's label
is its coordinate tuple.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from innet.gen.checks import parse_dims, spell_shape
from innet.gen.topology.core import MAX_PORT_ENTRIES, PortMap, Topology

__all__ = ["check_shape", "hyperx", "parse_shape", "torus"]


def check_shape(shape: Sequence[int] | int, what: str = "Shape") -> tuple[int, ...]:
    """Validate a grid shape and return it as a tuple of ints.

    A bare integer means a one-dimensional shape. Sizes of 1 are allowed (the dimension has no
    links); the grid needs at least two nodes.

    Raises
    ------
    TypeError
        If ``shape`` is not an integer or a sequence of integers.
    ValueError
        If it is empty, a size is below 1, it has fewer than 2 nodes, or it is too large.
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if (isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence)
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                       for s in shape)):
        raise TypeError(f"{what} must be a sequence of integers, not {shape!r:.60}")
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise ValueError(f"{what} must have at least one dimension")
    for d, size in enumerate(shape):
        if size < 1:
            raise ValueError(f"Dimension {d} of shape {spell_shape(shape)} must be at least 1, "
                             f"not {size}")
    nodes = int(np.prod(shape, dtype=object))
    if nodes < 2:
        raise ValueError(f"Shape {spell_shape(shape)} must have at least 2 nodes, not {nodes}")
    if nodes * max(2 * len(shape), sum(shape)) > MAX_PORT_ENTRIES:
        raise ValueError(f"Shape {spell_shape(shape)} is too large: {nodes} nodes")
    return shape


def parse_shape(text: str) -> tuple[int, ...]:
    """Parse ``"4x4x4"`` (also ``4,4,4`` or ``4*4``) into ``(4, 4, 4)`` and validate it.

    Raises
    ------
    ValueError
        If the text is not sizes joined by ``x`` (:func:`~innet.gen.checks.parse_dims`) or the
        shape is invalid.
    """
    return check_shape(parse_dims(text, "Shape", "4x4x4"))


def _coordinates(shape: tuple[int, ...]) -> np.ndarray:
    """``(N, L)`` coordinates of every node, row-major."""
    return np.stack(np.unravel_index(np.arange(int(np.prod(shape))), shape), axis=1)


def hyperx(shape: Sequence[int] | int) -> Topology:
    """The HyperX ``S1 x ... x SL``: nodes are coordinate tuples; two nodes are linked when their
    coordinates differ in exactly one dimension (a complete graph ``K_Sd`` along each dimension).

    Port order: by dimension ascending; within dimension ``d`` the ``Sd - 1`` peers in ascending
    order of their coordinate ``d``. So port ``off_d + (c if c < x_d else c - 1)`` of node ``x``
    reaches the node with coordinate ``d`` set to ``c``, where ``off_d = sum(S_e - 1, e < d)``.

    N = prod(S), every degree is ``sum(S - 1)``, diameter = the number of dimensions with
    ``S > 1`` (Ahn et al., SC'09, Section 3).

    Parameters
    ----------
    shape : int or sequence of int
        Sizes of the dimensions, each at least 1 (a size-1 dimension has no links).

    Raises
    ------
    TypeError, ValueError
        As :func:`check_shape`.
    """
    shape = check_shape(shape)
    coords = _coordinates(shape)
    n = len(coords)
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))])
    ids = np.arange(n)
    peer_cols, port_cols = [], []
    offset = 0
    for d, size in enumerate(shape):
        if size == 1:
            continue
        x = coords[:, d][:, None]
        k = np.arange(size - 1)[None, :]
        c = k + (k >= x)  # peer coordinates ascending, skipping our own
        peer_cols.append(ids[:, None] + (c - x) * strides[d])
        port_cols.append(offset + np.where(x < c, x, x - 1))
        offset += size - 1
    peer = np.concatenate(peer_cols, axis=1)
    peer_port = np.concatenate(port_cols, axis=1)
    return Topology(kind="hyperx", params={"shape": shape},
                    labels=tuple(map(tuple, coords.tolist())),
                    ports=PortMap._trusted(peer, peer_port))


def torus(shape: Sequence[int] | int, mesh: bool = False) -> Topology:
    """The torus (or with ``mesh=True`` the mesh) ``S1 x ... x SL``: node ``x`` is linked to
    ``x -+ e_d`` along every dimension ``d``, with wrap-around unless ``mesh``.

    Port order: by dimension ascending; within a dimension the minus neighbour
    (coordinate ``x_d - 1``) then the plus neighbour (``x_d + 1``). A port exists only for a
    neighbour that exists and is distinct, and ports are numbered contiguously, so:

    - a torus dimension of size >= 3 gives every node two ports (minus, plus);
    - a torus dimension of size 2 gives **one** port (the minus and plus neighbours are the same
      node, and they are joined by a single link, not two parallel ones);
    - a size-1 dimension gives no port;
    - in a mesh, a node on the low (high) boundary of a dimension has no minus (plus) port
      there, and its later ports move down to stay contiguous.

    A one-dimensional torus is a ring: ``torus(8)``. Diameter: ``sum(S // 2)`` for a torus,
    ``sum(S - 1)`` for a mesh. Torus degree: ``sum(min(S - 1, 2))``.

    Parameters
    ----------
    shape : int or sequence of int
        Sizes of the dimensions, each at least 1.
    mesh : bool
        No wrap-around links.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_shape`; ``TypeError`` if ``mesh`` is not a bool.
    """
    shape = check_shape(shape)
    if not isinstance(mesh, (bool, np.bool_)):
        raise TypeError(f"Mesh must be a bool, not {mesh!r}")
    mesh = bool(mesh)
    coords = _coordinates(shape)
    n = len(coords)
    ids = np.arange(n)
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))])
    slots = 2 * len(shape)
    target = np.full((n, slots), -1, dtype=np.int64)  # peer node per (dimension, direction) slot
    back = np.zeros(slots, dtype=np.int64)  # the peer's slot for the same link
    for d, size in enumerate(shape):
        x = coords[:, d]
        minus, plus = 2 * d, 2 * d + 1
        back[minus], back[plus] = plus, minus
        if size == 1:
            continue
        if mesh:
            target[:, minus] = np.where(x > 0, ids - strides[d], -1)
            target[:, plus] = np.where(x < size - 1, ids + strides[d], -1)
        else:
            target[:, minus] = ids + ((x - 1) % size - x) * strides[d]
            if size == 2:
                back[minus] = minus  # one link: both ends use their minus slot
            else:
                target[:, plus] = ids + ((x + 1) % size - x) * strides[d]
    present = target >= 0
    port_of_slot = np.cumsum(present, axis=1) - 1  # contiguous port numbers
    degree = present.sum(axis=1)
    radix = int(degree.max())
    peer = np.full((n, radix), -1, dtype=np.int64)
    peer_port = np.full((n, radix), -1, dtype=np.int64)
    us, ss = np.nonzero(present)
    ps = port_of_slot[us, ss]
    vs = target[us, ss]
    peer[us, ps] = vs
    peer_port[us, ps] = port_of_slot[vs, back[ss]]
    return Topology(kind="torus", params={"shape": shape, "mesh": mesh},
                    labels=tuple(map(tuple, coords.tolist())),
                    ports=PortMap._trusted(peer, peer_port))
