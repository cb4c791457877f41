"""Run a schedule on data: the numpy executor, the exactness check and the golden model.

:func:`execute` plays a :class:`~innet.gen.swing.schedule.Schedule` on one vector per rank in
the schedule's execution order (step by step; within a step every transfer reads the sender's
data before any receive of that step is applied). :func:`verify` runs it on random integers and
checks that every rank ends with the exact allreduce and that every element holds each rank's
contribution exactly once. :func:`golden` runs it with :func:`innet.gen.ops.combine`, giving the
bit patterns the endpoints must produce for any operation and data type, in the schedule's
reduction order (which matters for floating point).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from innet.gen import ops
from innet.gen.checks import check_type
from innet.gen.swing.schedule import Schedule

__all__ = ["MAX_VERIFY_WORDS", "Verdict", "execute", "golden", "verify"]

#: Largest ``ranks * elements`` :func:`verify` handles (about 1 GiB of state).
MAX_VERIFY_WORDS = 1 << 26


def _element_ranges(schedule: Schedule, n: int, ranges: np.ndarray) -> np.ndarray:
    """Element ranges ``(C, S, P, 2)`` of block ranges ``(C, S, P, 2)``."""
    count = schedule.collectives
    c = np.arange(count).reshape(-1, 1, 1, 1)
    lo = c * n // count
    size = (c + 1) * n // count - lo
    total = np.asarray(schedule.blocks, dtype=np.int64).reshape(-1, 1, 1, 1)
    return lo + ranges.astype(np.int64) * size // total


def execute(schedule: Schedule, data: np.ndarray,
            combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Run ``schedule`` on ``data`` and return every rank's final vector.

    Parameters
    ----------
    schedule : Schedule
    data : numpy.ndarray, shape (ranks, n, ...)
        Rank ``r``'s input vector is ``data[r]`` (trailing axes travel with each element).
    combine : callable
        ``combine(local, received)`` for a reducing receive: ``local`` is the receiver's own
        data, ``received`` the peer's, both arrays of the same shape; it returns the new local
        data. A copying receive overwrites.

    Returns
    -------
    numpy.ndarray
        Same shape and dtype as ``data``.

    Raises
    ------
    TypeError
        If ``schedule`` is not a :class:`Schedule`.
    ValueError
        If ``data`` does not hold one vector per rank.
    """
    check_type("Schedule", schedule, Schedule)
    data = np.array(data, copy=True)
    if data.ndim < 2 or data.shape[0] != schedule.ranks:
        raise ValueError(f"Data must have shape (ranks={schedule.ranks}, n, ...), "
                         f"not {data.shape}")
    n = data.shape[1]
    arrays = schedule.arrays()
    send_peer = arrays["send_peer"]
    send = _element_ranges(schedule, n, arrays["send"])
    reduce = arrays["reduce"]
    for s in range(schedule.steps):
        for c in range(schedule.collectives):
            senders = np.nonzero(send_peer[c, s] >= 0)[0]
            lo = send[c, s, senders, 0]
            length = send[c, s, senders, 1] - lo
            keep = length > 0
            senders, lo, length = senders[keep], lo[keep], length[keep]
            if not len(senders):
                continue
            offsets = np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length,
                                                                length)
            src = np.repeat(senders, length)
            elem = np.repeat(lo, length) + offsets
            dst = np.repeat(send_peer[c, s, senders].astype(np.int64), length)
            payload = data[src, elem]
            if reduce[c, s]:
                data[dst, elem] = combine(data[dst, elem], payload)
            else:
                data[dst, elem] = payload
    return data


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`verify`.

    Attributes
    ----------
    exact : bool
        Every rank ended with the exact allreduce, every contribution counted exactly once.
    elements : int
        Vector length used.
    message : str
        ``"exact, every block once"`` or what went wrong first.
    """

    exact: bool
    elements: int
    message: str

    def __bool__(self) -> bool:
        return self.exact


def _default_elements(schedule: Schedule) -> int:
    # Every block gets at least two elements, and the blocks are not all the same size.
    return schedule.collectives * (2 * max(schedule.blocks) + 1)


def _locate(schedule: Schedule, n: int, element: int) -> str:
    for c in range(schedule.collectives):
        lo, hi = schedule.share(c, n)
        if lo <= element < hi:
            total = schedule.blocks[c]
            size = hi - lo
            block = next(b for b in range(total)
                         if lo + b * size // total <= element < lo + (b + 1) * size // total)
            return f"collective {c}, block {block}"
    return "no collective"  # pragma: no cover - every element lies in a share


def verify(schedule: Schedule, n: int | None = None, seed: int = 0) -> Verdict:
    """Run ``schedule`` on random 64-bit integers and check the result exactly.

    Every rank starts with random ``uint64`` values and a contribution count of 1 per element;
    reducing adds both (wrapping), copying overwrites both. The schedule is exact when every
    rank ends with the wrapped sum of all inputs and a count equal to the number of ranks for
    every element: a block reduced twice or never shows up in the count, and a contribution
    counted twice while another is missing shows up in the sum (with probability 1 - 2^-64).

    Parameters
    ----------
    schedule : Schedule
    n : int, optional
        Vector length; by default every block gets two or three elements.
    seed : int
        Seed of the random inputs.

    Raises
    ------
    TypeError
        If ``schedule`` is not a :class:`Schedule`.
    ValueError
        If the state (ranks times elements) exceeds :data:`MAX_VERIFY_WORDS`.
    """
    check_type("Schedule", schedule, Schedule)
    n = _default_elements(schedule) if n is None else Schedule._check_n(n)
    if schedule.ranks * n > MAX_VERIFY_WORDS:
        raise ValueError(f"Verifying {schedule.ranks} ranks x {n} elements exceeds the "
                         f"executor's limit of {MAX_VERIFY_WORDS} values; verify a smaller "
                         f"network")
    rng = np.random.default_rng(seed)
    ranks = schedule.ranks
    state = np.empty((ranks, n, 2), dtype=np.uint64)
    state[..., 0] = rng.integers(0, 2**64, size=(ranks, n), dtype=np.uint64, endpoint=False)
    state[..., 1] = 1
    expected = state[..., 0].sum(axis=0, dtype=np.uint64)
    final = execute(schedule, state, lambda local, received: local + received)
    wrong_count = final[..., 1] != ranks
    if wrong_count.any():
        r, e = (int(i) for i in np.argwhere(wrong_count)[0])
        return Verdict(False, n, f"rank {r}, element {e} ({_locate(schedule, n, e)}) holds "
                                 f"{int(final[r, e, 1])} contributions, not {ranks}")
    wrong_value = final[..., 0] != expected
    if wrong_value.any():
        r, e = (int(i) for i in np.argwhere(wrong_value)[0])
        return Verdict(False, n, f"rank {r}, element {e} ({_locate(schedule, n, e)}) holds a "
                                 f"wrong sum: a contribution was counted twice and another "
                                 f"missed")
    return Verdict(True, n, "exact, every block once")


def golden(schedule: Schedule, op, dtype, inputs) -> np.ndarray:
    """Every rank's result bit patterns, reducing with :func:`innet.gen.ops.combine`.

    Parameters
    ----------
    schedule : Schedule
    op, dtype : innet.gen.ops.Op, innet.gen.ops.DType or their names
    inputs : array_like of uint32, shape (ranks, n)
        Input bit patterns (see :func:`innet.gen.ops.to_bits`).

    Returns
    -------
    numpy.ndarray of uint32, shape (ranks, n)
        Rank ``r``'s final vector. A reducing receive computes
        ``combine(op, dtype, local, received)`` element by element, in the schedule's
        execution order, so floating-point results carry the schedule's rounding; ranks may
        differ where the reduction orders differ.

    Raises
    ------
    TypeError
        If ``schedule`` is not a :class:`Schedule`.
    ValueError
        If ``op`` is not defined on ``dtype`` or ``inputs`` has the wrong shape.
    """
    check_type("Schedule", schedule, Schedule)
    op, dtype = ops.Op.parse(op), ops.DType.parse(dtype)
    ops.check_supported(op, dtype)
    inputs = np.asarray(inputs)
    if inputs.dtype != np.uint32:
        raise TypeError(f"Inputs must be uint32 bit patterns, not {inputs.dtype}")
    if inputs.ndim != 2:
        raise ValueError(f"Inputs must have shape (ranks, n), not {inputs.shape}")
    return execute(schedule, inputs,
                   lambda local, received: ops.combine(op, dtype, local, received))
