"""Arbiters of the switch allocator.

:class:`RoundRobin` grants one of several requesters (PIUMA, "Collective Virtual Channel": the
arbitration unit of every switch; round-robin within a class so no input starves), with a
Python model for the unit tests and formal properties beside it (:func:`round_robin_properties`,
proved by :mod:`innet.sim.formal`); the multiplexers and encoders the allocator is built of.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.hdl import Assert, Cover, Fragment
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int

__all__ = [
    "MAX_REQUESTERS",
    "ROUND_ROBIN_PROPERTIES",
    "RoundRobin",
    "RoundRobinModel",
    "any_of",
    "binary_mux",
    "encode_onehot",
    "onehot_mux",
    "round_robin_properties",
]

#: The most requesters a :class:`RoundRobin` arbitrates.
MAX_REQUESTERS = 1 << 16


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


def binary_mux(select, values) -> Value:
    """``values[select]`` for a binary ``select`` (0 past the last value): a balanced tree of
    2:1 multiplexers, one level per select bit, which synthesis packs into the FPGA's wide
    multiplexers (a 9:1 multiplexer costs fewer LUTs this way than gated by a one-hot select
    and ORed)."""
    select = Value.cast(select)
    level = [Value.cast(v).as_unsigned() for v in values]
    width = max(len(v) for v in level)
    for bit in range(len(select)):
        level += [Const(0, width)] * (len(level) % 2)
        level = [Mux(select[bit], level[k + 1], level[k]) for k in range(0, len(level), 2)]
    return level[0] if len(level) == 1 else Const(0, width)


def encode_onehot(onehot) -> Value:
    """The binary index of the high bit of a one-hot ``onehot`` (0 when all low)."""
    onehot = Value.cast(onehot)
    bits = max(1, (len(onehot) - 1).bit_length())
    return Cat(*(any_of(onehot[i] for i in range(len(onehot)) if i >> k & 1)
                 for k in range(bits)))


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
        The grant is used this cycle; priority then starts after it. Reset: requester 0
        has the highest priority.

    Raises
    ------
    TypeError, ValueError
        If ``count`` is not an integer from 1 to :data:`MAX_REQUESTERS`.
    """

    def __init__(self, count: int) -> None:
        self._count = check_int("Arbiter size", count, low=1, high=MAX_REQUESTERS)
        super().__init__({"requests": In(count), "grant": Out(count), "take": In(1)})

    @property
    def count(self) -> int:
        return self._count

    def elaborate(self, platform):
        m = Module()
        n = self._count
        req = self.requests
        # ``after``: the requesters after the grant taken last (all of them at reset), a
        # register. It is a suffix of the requesters (bit ``k`` set, every bit above it set),
        # so the first round of the priority order is the requests in it (``first``), the
        # second those below it: a requester in the first round wins when no first-round
        # requester precedes it, one in the second when the first round is empty and no
        # requester precedes it. Each grant bit is two OR trees over the requests, and the
        # register meets the requests directly: no per-requester priority mask is decoded
        # from it (n squared terms, 559 LUT4 at 17 requesters where this takes 171).
        self._after = after = Signal(n, init=(1 << n) - 1, name="after")
        first = Signal(n, name="first_round")
        m.d.comb += first.eq(req & after)
        m.d.comb += self.grant.eq(Cat(*(
            req[i] & Mux(after[i], ~any_of(first[k] for k in range(i)),
                         ~first.any() & ~any_of(req[k] for k in range(i)))
            for i in range(n))))
        with m.If(self.take & self.grant.any()):
            m.d.sync += after.eq(Cat(*(any_of(self.grant[j] for j in range(k))
                                       for k in range(n))))
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


# -- formal properties -------------------------------------------------------------------------

#: The formal properties of :class:`RoundRobin`, by name (:func:`round_robin_properties`).
ROUND_ROBIN_PROPERTIES = {
    "one-hot": "the grant is one-hot, goes only to a requester, and is given whenever anyone "
               "requests",
    "fair": "a requester that keeps requesting sees at most count - 1 taken grants to others "
            "before its own: it is granted within count taken grants",
}

def _check_property(kind: str, name: str, known: dict[str, str]) -> None:
    if name not in known:
        raise ValueError(f"{kind} property must be one of {', '.join(known)}, not {name!r}")


def _waits(m: Module, count: int, waiting, served) -> list[Signal]:
    """Per requester, a counter of the events ``waiting[i]`` since it was last ``served[i]``
    or stopped requesting (the harness's view of fairness)."""
    waited = [Signal(range(count + 2), name=f"waited_{i}") for i in range(count)]
    for i in range(count):
        with m.If(served[i]):
            m.d.sync += waited[i].eq(0)
        with m.Elif(waiting[i] & (waited[i] <= count)):
            m.d.sync += waited[i].eq(waited[i] + 1)
    return waited


def round_robin_properties(name: str, count: int = 4, *, block: type = RoundRobin
                           ) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(count)`` driven by free inputs, with the property ``name`` of
    :data:`ROUND_ROBIN_PROPERTIES` as ``Assert`` and a ``Cover`` that shows it is not vacuous
    (for ``fair``: some requester waits the full ``count - 1`` grants).

    The arbiter's own elaboration is unchanged; ``block`` may be a variant (a mutation).

    Returns
    -------
    (Module, list of Signal)
        The harness and its free inputs.

    Raises
    ------
    ValueError
        If ``name`` is not a property of :data:`ROUND_ROBIN_PROPERTIES`.
    """
    _check_property("Round-robin", name, ROUND_ROBIN_PROPERTIES)
    m = Module()
    dut = block(count)
    m.submodules.dut = Fragment.get(dut, None)  # elaborated here: its state is at hand
    after = getattr(dut, "_after", None)
    requests, take = Signal(count, name="requests"), Signal(name="take")
    m.d.comb += [dut.requests.eq(requests), dut.take.eq(take)]
    grant = dut.grant
    if after is not None:
        # Inductive strengthening: the requesters after the last grant taken are a suffix.
        m.d.comb += Assert(~any_of(after[k] & ~after[k + 1] for k in range(count - 1)))
    if name == "one-hot":
        m.d.comb += [
            Assert((grant & (grant - 1)[:count]) == 0),
            Assert((grant & ~requests) == 0),
            Assert(grant.any() == requests.any()),
            Cover(requests.all() & grant[count - 1]),
        ]
        return m, [requests, take]
    taken = take & grant.any()
    waited = _waits(m, count, [taken & ~grant[i] for i in range(count)],
                    [~requests[i] | (take & grant[i]) for i in range(count)])
    m.d.comb += [Assert(w <= count - 1) for w in waited]
    m.d.comb += Cover(any_of(w == count - 1 for w in waited))
    if after is not None:
        # ... and a waiting requester is at most count - 1 - waited places after p, the
        # requester with priority: the lowest of ``after`` (0 when it is empty).
        first = Signal(range(count), name="first")
        for i in range(count):
            with m.If(after[i] & (~after[i - 1] if i else 1)):
                m.d.comb += first.eq(i)
        for i in range(count):
            distance = Mux(first <= i, i - first, i + count - first)
            m.d.comb += Assert(~requests[i] | (waited[i] + distance <= count - 1))
    return m, [requests, take]
