"""Credit counters: a sender's view of one downstream buffer.

PIUMA, "Pipelined Reduction": "PIUMA switches employ a credit signal based mechanism to track
the buffer space on the neighboring switches. If the buffer on a neighbor is full, the
corresponding output port is labeled unavailable". One :class:`CreditCounter` per output port
and virtual channel; :class:`CreditModel` is its Python model; :func:`credit_properties` states
its formal properties (:data:`CREDIT_PROPERTIES`, proved by :mod:`innet.sim.formal`).
"""

from __future__ import annotations

from amaranth import Module, Signal
from amaranth.hdl import Assert, Assume, Cover
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int

__all__ = ["CREDIT_PROPERTIES", "CREDIT_ROUND_TRIP", "LOCAL_EXTRA", "MAX_DEPTH", "CreditCounter",
           "CreditModel", "credit_properties", "local_depth"]

#: Cycles from taking a credit to being able to use it again on a direct link: the depth an
#: input buffer (per VC) needs for one flit per cycle.
CREDIT_ROUND_TRIP = 5

#: Entries of an endpoint's receive buffer per VC beyond its switch's input buffers, for one
#: result per cycle from a switch with a collective path. A result of the root's collective
#: path is offered to the switch only while every target holds a credit for it, one cycle
#: before the switch's fork can send it, so the credit loop of the root's local port is a
#: cycle longer than that of a link into another switch's input (which returns a credit in the
#: cycle a flit arrives). :func:`local_depth` adds it.
LOCAL_EXTRA = 1


def local_depth(buffer_depth: int) -> int:
    """The default receive buffer (per VC) of an endpoint whose switch has input buffers of
    ``buffer_depth`` and a collective path: :data:`LOCAL_EXTRA` more, within
    :data:`MAX_DEPTH` (a buffer that deep has room to spare for the longer loop anyway)."""
    return min(buffer_depth + LOCAL_EXTRA, MAX_DEPTH)

#: The deepest buffer (per VC) a block is built with.
MAX_DEPTH = 4096


class CreditCounter(wiring.Component):
    """Counts the free entries of one downstream buffer.

    Parameters
    ----------
    depth : int
        The downstream buffer's depth: the counter's reset value and maximum.

    Members
    -------
    take : In(1)
        A flit is sent this cycle (consumes a credit). Only allowed while ``available``.
    give : In(1)
        A credit comes back this cycle.
    count : Out(range(depth + 1))
        Credits held (registered); reset to ``depth``. Updated as ``count - take + give``.
    available : Out(1)
        ``count != 0``: a flit may be sent this cycle. A register of its own, loaded with the
        next count's test (a ``take`` decides it through one gate), so that it starts a path
        instead of ending a comparator.
    error : Out(1)
        Sticky: a ``take`` without a credit or a ``give`` beyond ``depth`` happened (the
        count then stays in range; the event is a protocol violation by the caller or the
        receiver). Reset: 0.

    Raises
    ------
    TypeError, ValueError
        If ``depth`` is not a positive integer.
    """

    def __init__(self, depth: int) -> None:
        self._depth = check_int("Credit depth", depth, low=1, high=MAX_DEPTH)
        super().__init__({
            "take": In(1),
            "give": In(1),
            "count": Out(range(depth + 1), init=depth),
            "available": Out(1, init=1),
            "error": Out(1),
        })

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        take = self.take & ~self.give
        give = self.give & ~self.take
        with m.If(take):
            with m.If(self.count == 0):
                m.d.sync += self.error.eq(1)
            with m.Else():
                m.d.sync += [self.count.eq(self.count - 1), self.available.eq(self.count >= 2)]
        with m.Elif(give):
            with m.If(self.count == self._depth):
                m.d.sync += self.error.eq(1)
            with m.Else():
                m.d.sync += [self.count.eq(self.count + 1), self.available.eq(1)]
        return m


class CreditModel:
    """Python model of :class:`CreditCounter`, one :meth:`step` per clock edge."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.count = depth
        self.error = False

    @property
    def available(self) -> bool:
        return self.count != 0

    def step(self, take: bool, give: bool) -> None:
        if take and not give:
            if self.count == 0:
                self.error = True
            else:
                self.count -= 1
        elif give and not take:
            if self.count == self.depth:
                self.error = True
            else:
                self.count += 1


#: The formal properties of :class:`CreditCounter`, by name (:func:`credit_properties`).
CREDIT_PROPERTIES = {
    "in-range": "count stays within 0..depth whatever the sender and the receiver do",
    "no-credit-no-send": "available is low whenever no credit is held; a sender that sends "
                         "only while available, with a receiver that returns one credit per "
                         "flit, never has more than depth flits in flight, count is depth "
                         "minus the flits in flight and error stays low",
}


def credit_properties(name: str, depth: int = 5, *, block: type = CreditCounter
                      ) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(depth)`` driven by free inputs, with the property ``name`` of
    :data:`CREDIT_PROPERTIES` as ``Assert`` (``Assume`` for what the environment promises) and
    a ``Cover`` that shows the property is not vacuous.

    The counter's own elaboration is unchanged; ``block`` may be a variant (a mutation) with the
    same interface.

    Returns
    -------
    (Module, list of Signal)
        The harness and its free inputs (the ports for :func:`amaranth.back.rtlil.convert`).

    Raises
    ------
    ValueError
        If ``name`` is not a property of :data:`CREDIT_PROPERTIES`.
    """
    if name not in CREDIT_PROPERTIES:
        raise ValueError(f"Credit counter property must be one of "
                         f"{', '.join(CREDIT_PROPERTIES)}, not {name!r}")
    m = Module()
    m.submodules.dut = dut = block(depth)
    take, give = Signal(name="take"), Signal(name="give")
    m.d.comb += [dut.take.eq(take), dut.give.eq(give)]
    if name == "in-range":
        m.d.comb += [Assert(dut.count <= depth), Cover(dut.count == 0)]
        return m, [take, give]
    # Flits sent and not yet returned as credits, counted by the harness.
    flight = Signal(range(2 * depth + 2), name="flight")
    full = Signal(name="was_full")
    m.d.comb += [
        Assert(dut.available == (dut.count != 0)),
        Assume(~take | dut.available),  # the sender
        Assume(~give | (flight != 0)),  # the receiver returns credits only for flits it holds
        Assert(flight <= depth),
        Assert(dut.count == depth - flight),
        Assert(~dut.error),
        Cover(full & (dut.count == depth)),  # filled the buffer, then drained it
    ]
    m.d.sync += flight.eq(flight + take - give)
    with m.If(flight == depth):
        m.d.sync += full.eq(1)
    return m, [take, give]
