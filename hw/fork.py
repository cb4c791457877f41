"""The switch's multicast register: one collective flit and the outputs it has yet to leave on.

PIUMA, "Broadcast Tree": a response is multicast down the inverse tree, one copy per child
port. :class:`Fork` holds one such flit (a response from an input, or a flit of the collective
path's stream) until every one of its target outputs has taken it; each output takes its copy
in the cycle the switch's allocation grants it, so the copies need not leave together, and the
fork takes its next flit in the cycle its last target takes the one it holds (no bubble).
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.regmap.switch import MAX_COLLECTIVE_IDS, MAX_RADIX

__all__ = ["Fork"]


class Fork(wiring.Component):
    """A flit held for several outputs, taken again when the last of them has it.

    Whether the fork is free comes late in a cycle (from the allocation's grants, ``taken``),
    so its flit is not a register loaded then (that enable would fan out to every bit): every
    cycle the fork keeps whether it was free, the flit it could take and the flit it held, and
    its flit is chosen from those registers. What is loaded when the fork is free is small:
    whether it holds a flit, the targets left and the flit's id (one-hot, for the abort and the
    busy status).

    Parameters
    ----------
    flit_shape : shape-like
        The flit (a :class:`~innet.hw.flit.FlitParams` layout, with a ``cid`` field).
    outputs : int
        The outputs a flit can go to.
    ids : int
        Collective ids (of ``abort`` and ``id``).

    Members
    -------
    offer_valid, offer : In
        A flit offered to the fork this cycle.
    offer_targets : In(outputs)
        Its targets; a flit with none (its id not enabled) is taken and discarded.
    load : Out(1)
        The fork takes the offered flit this cycle: it is free (holds nothing, or its last
        target takes its flit now, or its id aborts) and a flit is offered.
    dropped : Out(1)
        ``load`` of a flit with no target, of an id not aborting: discarded.
    valid : Out(1)
        Holds a flit (register; reset 0). A flit of an id aborting is not kept.
    flit : Out(flit_shape)
        The flit held (from registers, see above).
    left : Out(outputs)
        The targets that have not taken it yet (register).
    taken : In(outputs)
        The outputs that take the flit this cycle (their allocation's grant).
    id : Out(ids)
        The held flit's id, one-hot (register).
    abort : In(ids)
        Per id: while high, a fork holding a flit of the id is done with it (it leaves on no
        further output), and a flit of the id offered is taken and discarded.
    aborted : Out(1)
        The held flit's id aborts (meaningful while ``valid``).
    sent : Out(flit_shape)
        ``flit`` a cycle late: the flit an output granted last cycle takes (register).

    Raises
    ------
    TypeError, ValueError
        If ``outputs`` or ``ids`` is not a positive integer.
    """

    def __init__(self, flit_shape, outputs: int, ids: int) -> None:
        check_int("Outputs", outputs, low=1, high=MAX_RADIX + 1)
        self._ids = check_int("Collective ids", ids, low=1, high=MAX_COLLECTIVE_IDS)
        super().__init__({
            "offer_valid": In(1), "offer": In(flit_shape), "offer_targets": In(outputs),
            "load": Out(1), "dropped": Out(1),
            "valid": Out(1), "flit": Out(flit_shape), "left": Out(outputs),
            "taken": In(outputs), "id": Out(ids), "abort": In(ids), "aborted": Out(1),
            "sent": Out(flit_shape),
        })

    def elaborate(self, platform):
        m = Module()
        fresh = Signal(name="fresh")  # the fork was free last cycle
        candidate = Signal(self.offer.shape(), name="candidate")  # the flit offered then
        m.d.comb += [self.flit.eq(Mux(fresh, candidate, self.sent)),
                     self.aborted.eq((self.id & self.abort).any())]
        m.d.sync += self.sent.eq(self.flit)

        done = ((self.left & ~self.taken) == 0) | self.aborted
        free = ~self.valid | done
        hot = Cat(self.offer.cid == c for c in range(self._ids))
        gone = (hot & self.abort).any()
        m.d.comb += [self.load.eq(free & self.offer_valid),
                     self.dropped.eq(self.load & ~gone & ~self.offer_targets.any())]
        m.d.sync += [fresh.eq(free), candidate.eq(self.offer)]
        with m.If(free):
            m.d.sync += [self.valid.eq(self.load & ~gone & self.offer_targets.any()),
                         self.id.eq(hot),
                         self.left.eq(self.offer_targets)]
        with m.Else():
            m.d.sync += self.left.eq(self.left & ~self.taken)
        return m
