"""One entry point for every schedule: :func:`build_schedule`.

========== ================================================== ==================== ===========
name       algorithm                                          paper                collectives
========== ================================================== ==================== ===========
swing-b    Swing, bandwidth-optimal                           Sec. 3.1.1, 4        2·D
swing-l    Swing, latency-optimal                             Sec. 3.1.2, 4        2·D
recdoub-b  recursive doubling, bandwidth-opt. (Rabenseifner)  Sec. 2.3.3           1
recdoub-l  recursive doubling, latency-optimal                Sec. 2.3.2           1
ring       ring on a Hamiltonian cycle, both directions       Sec. 2.3.1           2
bucket     bucket (dimension-wise rings)                      Sec. 2.3.4           2·D
========== ================================================== ==================== ===========

``D`` counts the sides longer than 1. ``multiport=False`` runs a single collective instead;
``multiport=True`` on recursive doubling runs ``D`` plain and ``D`` mirrored collectives like
Swing (the "mirrored recursive doubling" of Section 5.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from innet.gen.checks import spell_shape
from innet.gen.swing.butterfly import NONPOW2_MODES, PAPER_LIMIT, butterfly_schedule
from innet.gen.swing.rings import bucket_schedule, ring_schedule
from innet.gen.swing.schedule import MAX_RANKS, Schedule

__all__ = ["ALGORITHMS", "MAX_ENTRIES", "MAX_RANKS", "build_schedule", "check_shape"]

#: Algorithm names accepted by :func:`build_schedule`.
ALGORITHMS = ("swing-b", "swing-l", "recdoub-b", "recdoub-l", "ring", "bucket")


#: The largest number of entries (collectives x steps x ranks) a schedule may have.
MAX_ENTRIES = 1 << 25

_DEFAULT_MULTIPORT = {"swing-b": True, "swing-l": True, "recdoub-b": False, "recdoub-l": False,
                      "ring": True, "bucket": True}


def check_shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    """Validate a torus shape (an integer is a ring) and return it as a tuple.

    Raises
    ------
    TypeError
        If ``shape`` is not an integer or a sequence of integers.
    ValueError
        If it is empty, has a side below 1, fewer than 2 ranks or more than :data:`MAX_RANKS`.
    """
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (int(shape),)
    if (isinstance(shape, str | bytes) or not isinstance(shape, Sequence)
            or not all(isinstance(d, int | np.integer) and not isinstance(d, bool)
                       for d in shape)):
        raise TypeError(f"Shape must be a sequence of integers, not {shape!r}")
    shape = tuple(int(d) for d in shape)
    spelled = spell_shape(shape)
    if not shape:
        raise ValueError("Shape must have at least one side")
    if min(shape) < 1:
        raise ValueError(f"Every side of shape {spelled} must be at least 1")
    ranks = math.prod(shape)
    if ranks < 2:
        raise ValueError(f"Shape {spelled} must have at least 2 ranks, not {ranks}")
    if ranks > MAX_RANKS:
        raise ValueError(f"Shape {spelled} has {spell_shape((ranks,))} ranks, more than the "
                         f"{MAX_RANKS} supported")
    return shape


def build_schedule(algorithm: str, shape: Sequence[int] | int, *,
                   multiport: bool | None = None, nonpow2: str = "auto") -> Schedule:
    """Generate an allreduce schedule.

    Parameters
    ----------
    algorithm : str
        One of :data:`ALGORITHMS`.
    shape : int or sequence of int
        The torus (or HyperX) shape the ranks sit on, row-major; an integer is a ring. Rank
        ``r`` runs on node ``r``.
    multiport : bool, optional
        Run one collective per port direction (see the table above); the default is the
        paper's: on for Swing, ring and bucket, off for recursive doubling.
    nonpow2 : {"auto", "paper", "fold"}
        Sides that are not powers of two, for Swing and recursive doubling (see
        :mod:`innet.gen.swing.butterfly`).

    Returns
    -------
    Schedule

    Raises
    ------
    TypeError
        If ``shape`` or ``multiport`` has the wrong type.
    ValueError
        If the algorithm, shape or ``nonpow2`` mode is not valid.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"Algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
    shape = check_shape(shape)
    if multiport is None:
        multiport = _DEFAULT_MULTIPORT[algorithm]
    if not isinstance(multiport, bool | np.bool_):
        raise TypeError(f"Multiport must be a bool, not {multiport!r}")
    if nonpow2 not in NONPOW2_MODES:
        raise ValueError(f"Non-power-of-two mode must be one of {', '.join(NONPOW2_MODES)}, "
                         f"not {nonpow2!r}")
    multiport = bool(multiport)
    ranks = int(np.prod(shape))
    sides = sum(1 for d in shape if d > 1)
    bound = ""
    if algorithm == "ring":
        entries = (2 if multiport else 1) * 2 * (ranks - 1) * ranks
    elif algorithm == "bucket":
        entries = (2 * sides if multiport else 1) * 2 * sides * (max(shape) - 1) * ranks
    else:
        # At most two phases of ceil(log2 p) steps and two more of a non-power-of-two mode;
        # the paper's mode on a small ring takes up to about 3p.
        steps = 2 * ((ranks - 1).bit_length() + 2)
        if len(shape) == 1 and ranks <= PAPER_LIMIT:
            steps = max(steps, 3 * ranks)
        entries, bound = (2 * sides if multiport else 1) * steps * ranks, "up to "
    if entries > MAX_ENTRIES:
        raise ValueError(f"A {algorithm} schedule on {ranks} ranks has {bound}{entries} "
                         f"step-table entries, more than the {MAX_ENTRIES} supported")
    if algorithm == "ring":
        return ring_schedule(shape, multiport)
    if algorithm == "bucket":
        return bucket_schedule(shape, multiport)
    pattern, variant = algorithm.split("-")
    return butterfly_schedule(pattern, shape, variant == "b", multiport, nonpow2)
