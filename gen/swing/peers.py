"""Peer functions of Swing and recursive doubling, on rings and on multidimensional tori.

Swing (De Sensi et al., NSDI 2024), Section 3.1, Eq. 2: at step ``s`` rank ``r`` of a ring of
``p`` ranks talks to

    pi(r, s) = r + rho(s) mod p   if r is even,
              r - rho(s) mod p   if r is odd,

with ``rho(s) = sum_{i=0..s} (-2)^i = (1 - (-2)^(s+1)) / 3`` and distance ``delta(s) = |rho(s)|``.

On a D-dimensional torus (Section 4.1) step ``s`` works on one dimension ``omega(s)`` and
applies the ring rule to that coordinate with the per-dimension step ``sigma(s)``; the sign flips
for odd coordinates. On a square torus ``omega(s) = s mod D`` and ``sigma(s) = floor(s / D)``;
on a non-square torus (Section 4.2) a dimension whose steps are exhausted is skipped, so the
small dimensions finish first. Multiport Swing runs ``D`` *plain* collectives, collective
``c`` starting on dimension ``c``, and ``D`` *mirrored* ones that go the opposite way
(Section 4.1, Figure 5).

Recursive doubling (Section 2.3.2) pairs coordinate ``a`` with ``a XOR 2^sigma`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "PATTERNS",
    "coordinates",
    "delta",
    "dimension_sequence",
    "pattern_peers",
    "pi",
    "rho",
    "torus_distance",
]

#: The butterfly-like peer patterns: Swing (Eq. 2) and recursive doubling (XOR).
PATTERNS = ("swing", "recdoub")


#: The largest step of a collective on one dimension (a side of 2^MAX_STEP ranks).
MAX_STEP = 1024


def _step(s) -> int:
    if not isinstance(s, int | np.integer) or isinstance(s, bool):
        raise TypeError(f"Step must be an integer, not {s!r}")
    if not 0 <= s <= MAX_STEP:
        raise ValueError(f"Step must be between 0 and {MAX_STEP}, not {s}")
    return int(s)


def rho(s: int) -> int:
    """rho(s) = sum_{i=0..s} (-2)^i = (1 - (-2)^(s+1)) / 3 (Swing, Table 1 and Eq. 2).

    1, -1, 3, -5, 11, -21, 43, ...
    """
    s = _step(s)
    return (1 - (-2) ** (s + 1)) // 3


def delta(s: int) -> int:
    """delta(s) = |rho(s)| = (2^(s+1) - (-1)^(s+1)) / 3, the peers' distance (Section 3.1)."""
    return abs(rho(s))


def pi(r: int, s: int, p: int) -> int:
    """pi(r, s): the peer of rank ``r`` at step ``s`` on a ring of ``p`` ranks (Swing, Eq. 2)."""
    if not isinstance(p, int | np.integer) or isinstance(p, bool):
        raise TypeError(f"Ring size must be an integer, not {p!r}")
    if p < 1:
        raise ValueError(f"Ring size must be positive, not {p}")
    if not isinstance(r, int | np.integer) or isinstance(r, bool):
        raise TypeError(f"Rank must be an integer, not {r!r}")
    if not 0 <= r < p:
        raise ValueError(f"Rank must be in 0..{p - 1}, not {r}")
    step = rho(s)
    return int((r + step) % p if r % 2 == 0 else (r - step) % p)


def coordinates(shape: Sequence[int]) -> np.ndarray:
    """Coordinates of every rank, shape ``(D, P)``; rank = row-major index of its coordinates."""
    return np.stack(np.unravel_index(np.arange(int(np.prod(shape))), tuple(shape)))


def torus_distance(shape: Sequence[int], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Minimal hop distance between ranks ``a`` and ``b`` on a torus of ``shape``."""
    ca = np.stack(np.unravel_index(np.asarray(a), tuple(shape)))
    cb = np.stack(np.unravel_index(np.asarray(b), tuple(shape)))
    d = np.asarray(shape).reshape((-1,) + (1,) * (ca.ndim - 1))
    diff = np.abs(ca - cb)
    return np.minimum(diff, d - diff).sum(axis=0)


def dimension_sequence(steps_per_dim: Sequence[int], start: int) -> list[tuple[int, int]]:
    """The ``(dimension, per-dimension step)`` of every step of a collective (Sections 4.1-4.2).

    Dimensions are visited round-robin from ``start``; a dimension whose steps are all done is
    skipped. On a square torus this is ``omega(s) = (start + s) mod D`` and
    ``sigma(s) = floor(s / D)``.

    Raises
    ------
    TypeError, ValueError
        If a dimension's steps are not an integer from 0 to :data:`MAX_STEP`, none are given,
        or ``start`` is not a dimension.
    """
    left = [_step(n) for n in steps_per_dim]
    dims = len(left)
    if not dims:
        raise ValueError("Steps per dimension must name at least one dimension")
    if isinstance(start, bool) or not isinstance(start, int | np.integer) or not (
            0 <= start < dims):
        raise ValueError(f"Start must be a dimension, 0..{dims - 1}, not {start!r}")
    done = [0] * dims
    sequence = []
    dim = start - 1
    while any(left):
        dim = (dim + 1) % dims
        while not left[dim]:
            dim = (dim + 1) % dims
        sequence.append((dim, done[dim]))
        done[dim] += 1
        left[dim] -= 1
    return sequence


def _move(pattern: str, coord: np.ndarray, sigma: int, size: int) -> np.ndarray:
    if pattern == "swing":
        sign = np.where(coord % 2 == 0, 1, -1)
        return (coord + sign * rho(sigma)) % size
    return coord ^ (1 << sigma)


def pattern_peers(pattern: str, shape: Sequence[int], start: int = 0,
                  mirrored: bool = False) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Peers of every rank at every step of one collective on a torus of power-of-two sides.

    Parameters
    ----------
    pattern : {"swing", "recdoub"}
        Swing's Eq. 2 per dimension, or recursive doubling (``a XOR 2^sigma``).
    shape : sequence of int
        Torus shape; every side a power of two (sides of 1 take no steps).
    start : int
        The dimension the collective starts on (plain collective ``start``).
    mirrored : bool
        Go the opposite way: the plain pattern seen through the reflection ``a -> -a`` of every
        coordinate (Swing, Section 4.1: rank 0 of a 4x4 torus talks to 3 and 12 instead of 1
        and 4 on the first step).

    Returns
    -------
    peers : numpy.ndarray, shape (steps, P)
        ``peers[s, r]``; every row is an involution without fixed points.
    sequence : list of (int, int)
        The ``(dimension, per-dimension step)`` of every step.

    Raises
    ------
    TypeError, ValueError
        As :func:`innet.gen.swing.algorithms.check_shape`, or if a side is not a power of two.
    """
    from innet.gen.swing.algorithms import check_shape

    shape = check_shape(shape)
    for d in shape:
        if d & (d - 1):
            raise ValueError(f"Every side must be a power of two, not {d}")
    coords = coordinates(shape)
    steps_per_dim = [d.bit_length() - 1 for d in shape]
    sequence = dimension_sequence(steps_per_dim, start)
    peers = np.empty((len(sequence), coords.shape[1]), dtype=np.int64)
    for s, (dim, sigma) in enumerate(sequence):
        size = shape[dim]
        moved = coords.copy()
        if mirrored:
            moved[dim] = (-_move(pattern, (-coords[dim]) % size, sigma, size)) % size
        else:
            moved[dim] = _move(pattern, coords[dim], sigma, size)
        peers[s] = np.ravel_multi_index(tuple(moved), shape)
    return peers, sequence
