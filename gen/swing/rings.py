"""Ring and bucket allreduce schedules (Swing, Sections 2.3.1 and 2.3.4).

*Ring* (Patarasuk and Yuan): the ranks form a cycle; a reduce-scatter of ``p - 1`` steps, in
which every rank sends one block to its successor and reduces the block from its predecessor,
then an allgather of ``p - 1`` steps. The cycle is a Hamiltonian cycle of the torus
(:func:`snake_cycle`), so every transfer is one hop. With ``multiport`` two rings run, one per
direction of the cycle, each on half the vector (two of the ``2·D`` ports; the four-ring
variant of Section 2.3.1 on two edge-disjoint Hamiltonian cycles of a 2-D torus is not
generated).

*Bucket* (Barnett et al.; Sack and Gropp; Jain and Sabharwal): a ring reduce-scatter along each
dimension in turn, on the data the previous dimensions left, then ring allgathers in the
reverse order. With ``multiport`` ``2·D`` buckets run, each starting on a different dimension
and going in a different direction, so at every step each link direction carries at most one
ring. All buckets move to the next dimension together (Section 5.2): a dimension phase lasts
``max(d) - 1`` steps and rings on shorter dimensions idle for the rest of it.

Blocks are numbered so that every transfer is one contiguous range: a ring's block ``i`` ends up
at position ``i`` of the cycle; a bucket's block index is the mixed-radix number of the ring
positions, the first dimension it visits most significant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from innet.gen.swing.peers import coordinates
from innet.gen.swing.program import Program, assemble
from innet.gen.swing.schedule import Schedule

__all__ = ["bucket_schedule", "ring_schedule", "snake_cycle"]


def _odd_cycle(shape: tuple[int, ...]) -> np.ndarray:
    """Coordinates ``(D, P)`` of a Hamiltonian cycle of a torus whose sides are all odd.

    Recursively: a cycle ``C`` of the last ``D - 1`` sides, then the ``a x |C|`` torus (``a``
    odd) walked as row 0 left to right, rows ``1..a-1`` in snake order over columns
    ``1..|C|-1``, the wrap-around link back to column 0 and up column 0 to the start.
    """
    if len(shape) == 1:
        return np.arange(shape[0])[None, :]
    rest = _odd_cycle(shape[1:])
    a, m = shape[0], rest.shape[1]
    rows = [np.zeros(m, dtype=np.int64)]
    cols = [np.arange(m)]
    for row in range(1, a):
        inner = np.arange(1, m)
        rows.append(np.full(m - 1, row))
        cols.append(inner[::-1] if row % 2 else inner)
    rows.append(np.arange(a - 1, 0, -1))
    cols.append(np.zeros(a - 1, dtype=np.int64))
    row, col = np.concatenate(rows), np.concatenate(cols)
    return np.concatenate([row[None, :], rest[:, col]])


def snake_cycle(shape: Sequence[int]) -> np.ndarray:
    """Ranks in the order of a Hamiltonian cycle of the torus: consecutive ranks, and the last
    and the first, are neighbours.

    With an even side: a reflected mixed-radix Gray code (snake order) with that side as the
    outermost digit, closed by its wrap-around link. With all sides odd: the construction of
    :func:`_odd_cycle`.

    Raises
    ------
    TypeError, ValueError
        As :func:`innet.gen.swing.algorithms.check_shape`.
    """
    from innet.gen.swing.algorithms import check_shape

    shape = check_shape(shape)
    dims = [i for i, d in enumerate(shape) if d > 1]
    even = [i for i in dims if shape[i] % 2 == 0]
    coords = np.zeros((len(shape), int(np.prod(shape))), dtype=np.int64)
    if not even:
        coords[dims] = _odd_cycle(tuple(shape[i] for i in dims))
        return np.ravel_multi_index(tuple(coords), shape)
    dims.remove(even[0])
    dims.insert(0, even[0])
    # Build the Gray code from the innermost digit outwards.
    codes = np.zeros((1, 0), dtype=np.int64)
    for dim in reversed(dims):
        size = shape[dim]
        blocks = [codes if v % 2 == 0 else codes[::-1] for v in range(size)]
        heads = np.repeat(np.arange(size), len(codes))[:, None]
        codes = np.concatenate([heads, np.concatenate(blocks)], axis=1)
    for column, dim in enumerate(dims):
        coords[dim] = codes[:, column]
    return np.ravel_multi_index(tuple(coords), shape)


def _ring_program(cycle: np.ndarray) -> Program:
    ranks = len(cycle)
    program = Program(ranks, ranks)
    position = np.empty(ranks, dtype=np.int64)
    position[cycle] = np.arange(ranks)
    succ = cycle[(position + 1) % ranks]
    pred = cycle[(position - 1) % ranks]
    for j in range(ranks - 1):  # reduce-scatter: position i ends owning block i
        out = (position - j - 1) % ranks
        inc = (position - j - 2) % ranks
        program.add(succ, pred, np.stack([out, out + 1], 1), np.stack([inc, inc + 1], 1), True)
    for j in range(ranks - 1):  # allgather
        out = (position - j) % ranks
        inc = (position - j - 1) % ranks
        program.add(succ, pred, np.stack([out, out + 1], 1), np.stack([inc, inc + 1], 1), False)
    return program


def ring_schedule(shape: Sequence[int], multiport: bool) -> Schedule:
    """Ring allreduce on a snake Hamiltonian cycle of the torus (one or both directions)."""
    cycle = snake_cycle(shape)
    programs = [_ring_program(cycle)]
    if multiport:
        programs.append(_ring_program(cycle[::-1].copy()))
    return assemble("ring", shape, programs)


def _bucket_program(shape: tuple[int, ...], order: list[int], direction: int,
                    phase: int) -> Program:
    """One bucket: ring reduce-scatters along ``order``, then allgathers back."""
    ranks = int(np.prod(shape))
    coords = coordinates(shape)
    # Ring position along each dimension (the cycle runs +1 or -1 along the coordinate).
    position = (direction * coords) % np.asarray(shape)[:, None]
    stride = {}
    weight = 1
    for dim in reversed(order):
        stride[dim] = weight
        weight *= shape[dim]
    rs = Program(ranks, ranks)
    prefix = np.zeros(ranks, dtype=np.int64)
    for dim in order:
        size = shape[dim]
        moved = coords.copy()
        moved[dim] = (coords[dim] + direction) % size
        succ = np.ravel_multi_index(tuple(moved), shape)
        moved[dim] = (coords[dim] - direction) % size
        pred = np.ravel_multi_index(tuple(moved), shape)
        step = stride[dim]
        for j in range(phase):
            if j >= size - 1:
                rs.add(np.full(ranks, -1), np.full(ranks, -1), np.zeros((ranks, 2)),
                       np.zeros((ranks, 2)), True)
                continue
            out = prefix + ((position[dim] - j - 1) % size) * step
            inc = prefix + ((position[dim] - j - 2) % size) * step
            rs.add(succ, pred, np.stack([out, out + step], 1), np.stack([inc, inc + step], 1),
                   True)
        prefix = prefix + position[dim] * step
    program = Program(ranks, ranks)
    program.extend(rs)
    program.extend(rs.reversed())
    return program


def bucket_schedule(shape: Sequence[int], multiport: bool) -> Schedule:
    """Bucket allreduce: dimension-wise ring reduce-scatters, then allgathers in reverse."""
    shape = tuple(int(d) for d in shape)
    sides = [i for i, d in enumerate(shape) if d > 1]
    phase = max(shape) - 1
    starts = range(len(sides)) if multiport else range(1)
    programs = []
    for direction in ((1, -1) if multiport else (1,)):
        for k in starts:
            order = sides[k:] + sides[:k]
            programs.append(_bucket_program(shape, order, direction, phase))
    return assemble("bucket", shape, programs)
