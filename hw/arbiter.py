"""Arbiters of the switch allocator.

:class:`RoundRobin` grants one of several requesters (PIUMA, "Collective Virtual Channel": the
arbitration unit of every switch; round-robin within a class so no input starves).
:class:`ConflictArbiter` grants a set of requesters whose target sets do not overlap, in
least-recently-granted order; the collective path uses it so that multicast flits that need
several outputs at once are never starved. Each has a Python model for the unit tests.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int

__all__ = [
    "ConflictArbiter",
    "ConflictArbiterModel",
    "RoundRobin",
    "RoundRobinModel",
    "any_of",
    "onehot_mux",
]


def onehot_mux(selects, values) -> Value:
    """``values[i]`` where ``selects[i]`` is high (selects are one-hot or all low: then 0).

    An AND-OR multiplexer: every input is gated by its select and the results are ORed, so
    synthesis builds a balanced tree instead of the priority chain that a sequence of
    ``with m.If(select):`` assignments describes.
    """
    values = [Value.cast(v) for v in values]
    width = max(len(v) for v in values)
    return _or_tree([v.as_unsigned() & Value.cast(sel).replicate(width)
                     for sel, v in zip(selects, values, strict=True)])


def any_of(values) -> Value:
    """1 when any of the 1-bit ``values`` is 1 (one balanced OR; 0 for no values)."""
    values = list(values)
    return Cat(*values).any() if values else Const(0, 1)


def _or_tree(terms: list) -> Value:
    """OR of ``terms`` as a balanced tree (a chain ``a | b | c ...`` is as deep as it is long)."""
    while len(terms) > 1:
        terms = [terms[k] | terms[k + 1] if k + 1 < len(terms) else terms[k]
                 for k in range(0, len(terms), 2)]
    return terms[0]


class RoundRobin(wiring.Component):
    """A round-robin arbiter: one grant among ``count`` requesters.

    The grant goes to the first requester at or after the one following the last granted
    requester (cyclically). Priority moves only when the grant is used (``take``), so a
    requester that keeps requesting is granted within ``count`` taken grants.

    Parameters
    ----------
    count : int
        Number of requesters.

    Members
    -------
    requests : In(count)
        Bit ``i``: requester ``i`` wants the resource this cycle.
    grant : Out(count)
        One-hot grant (combinational from ``requests``), zero when nobody requests.
    take : In(1)
        The grant is used this cycle; the next search starts after it. Reset: requester 0
        has the highest priority.

    Raises
    ------
    TypeError, ValueError
        If ``count`` is not a positive integer.
    """

    def __init__(self, count: int) -> None:
        self._count = check_int("Arbiter size", count, low=1)
        super().__init__({"requests": In(count), "grant": Out(count), "take": In(1)})

    @property
    def count(self) -> int:
        return self._count

    def elaborate(self, platform):
        m = Module()
        n = self._count
        # mask: requesters after the last granted one (all ones at reset).
        mask = Signal(n, init=(1 << n) - 1)
        masked = Signal(n)
        m.d.comb += masked.eq(self.requests & mask)
        pick = Signal(n)
        m.d.comb += pick.eq(masked.any().replicate(n) & masked
                            | ~masked.any().replicate(n) & self.requests)
        # Lowest set bit: x & -x.
        m.d.comb += self.grant.eq(pick & (~pick + 1)[:n])
        with m.If(self.take & self.grant.any()):
            m.d.sync += mask.eq(~(self.grant | (self.grant - 1)[:n])[:n])
        return m


class RoundRobinModel:
    """Python model of :class:`RoundRobin`."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.next = 0  # the requester with the highest priority

    def grant(self, requests: int) -> int | None:
        """The granted index for the bit mask ``requests``, or None."""
        for k in range(self.count):
            i = (self.next + k) % self.count
            if requests >> i & 1:
                return i
        return None

    def step(self, requests: int, take: bool) -> int | None:
        """Grant for ``requests`` and advance one edge; returns the grant."""
        granted = self.grant(requests)
        if take and granted is not None:
            self.next = (granted + 1) % self.count
        return granted


class ConflictArbiter(wiring.Component):
    """Grants requesters whose target sets are pairwise disjoint, least recently granted first.

    Requester ``i`` is granted when it requests and no requester that has priority over it
    requests an overlapping target set. Priority is a total order kept as a matrix: every
    cycle the granted requesters move (in their order) below all others. The requester with the
    highest priority among those requesting is always granted, so a requester that keeps
    requesting is granted within ``count`` cycles. Every grant must be acted on.

    Parameters
    ----------
    count : int
        Number of requesters.
    width : int
        Number of targets (bits of each target set).

    Members
    -------
    requests : In(count)
        Bit ``i``: requester ``i`` wants all of ``targets[i]`` this cycle.
    targets : In(width).array(count)
        Target set of each requester.
    grant : Out(count)
        Granted requesters (combinational). Reset: lower indices have priority.

    Raises
    ------
    TypeError, ValueError
        If ``count`` or ``width`` is not a positive integer.
    """

    def __init__(self, count: int, width: int) -> None:
        self._count = check_int("Arbiter size", count, low=1)
        self._width = check_int("Target count", width, low=1)
        super().__init__({
            "requests": In(count),
            "targets": In(width).array(count),
            "grant": Out(count),
        })

    def elaborate(self, platform):
        m = Module()
        n = self._count
        # beats[(i, j)] for i < j: requester i has priority over requester j.
        beats = {(i, j): Signal(init=1, name=f"beats_{i}_{j}")
                 for i in range(n) for j in range(i + 1, n)}

        def over(a, b):
            return beats[(a, b)] if a < b else ~beats[(b, a)]

        for i in range(n):
            blockers = []
            for j in range(n):
                if j == i:
                    continue
                overlap = (self.targets[i] & self.targets[j]).any()
                blockers.append(self.requests[j] & over(j, i) & overlap)
            blocked = any_of(blockers)
            m.d.comb += self.grant[i].eq(self.requests[i] & ~blocked)
        for (i, j), bit in beats.items():
            with m.If(self.grant[i] & ~self.grant[j]):
                m.d.sync += bit.eq(0)
            with m.Elif(self.grant[j] & ~self.grant[i]):
                m.d.sync += bit.eq(1)
        return m


class ConflictArbiterModel:
    """Python model of :class:`ConflictArbiter`: an explicit priority list."""

    def __init__(self, count: int) -> None:
        self.order = list(range(count))  # highest priority first

    def step(self, requests: int, targets: list[int]) -> int:
        """Grant mask for this cycle; then move the granted requesters to the bottom."""
        granted = 0
        for pos, i in enumerate(self.order):
            if not requests >> i & 1:
                continue
            blocked = any(requests >> j & 1 and targets[i] & targets[j]
                          for j in self.order[:pos])
            if not blocked:
                granted |= 1 << i
        self.order = ([i for i in self.order if not granted >> i & 1]
                      + [i for i in self.order if granted >> i & 1])
        return granted
