"""The p2p side of a switch input: per-VC queues in RAM and a registered offer.

A switch input holds its point-to-point flits per hop-indexed VC (PIUMA, "Switch Architecture
for In-network Computing": input buffers per virtual channel, the space a sender's credits
count). :class:`InputUnit` keeps them in VC-partitioned memories, of routes (what allocation
needs: the output one-hot and the outgoing VC, in LUT RAM) and of flits (what the crossbar
needs, in block RAM), and presents the head of one VC as its *offer*, a register. Allocation
therefore starts from flip-flops: the unit computes its next offer for both outcomes of the
current one (taken, or not) from registered state, and the ``take`` of the allocation only
selects between the two.
:class:`InputUnitModel` is the deliberately simple Python model the unit tests compare against.
"""

from __future__ import annotations

from collections import deque

from amaranth import Cat, Module, Mux, Shape, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.regmap.switch import MAX_RADIX
from innet.hw.arbiter import any_of, onehot_mux
from innet.hw.credit import MAX_DEPTH

__all__ = ["MAX_VCS", "STREAK", "InputUnit", "InputUnitModel"]

#: Flits one VC may have taken in a row while another VC of the input holds a flit.
STREAK = 4

#: The most VCs an input holds.
MAX_VCS = 256


class InputUnit(wiring.Component):
    """The p2p VC queues of one switch input, with the offer of one head to the allocator.

    A route names its output (one-hot ``out``) and its outgoing VC (``hop``); the offer
    requests its output when ``ready`` says that output takes a flit on that VC now. The VC
    offered gives way to the next one after it (cyclically) that holds a flit when it runs
    empty, after :data:`STREAK` flits taken in a row while another VC holds a flit, and when
    in the previous cycle its offer could not go but the other VC's head could. An offer
    requested and not taken stays (the allocator's round-robin grants it within a round), and
    after a take the next flit of the same VC is offered in the next cycle (no bubble between
    back-to-back grants). So a VC whose head can go waits for at most :data:`STREAK` flits of
    another, whatever the rhythm of the grants. A flit written into an empty VC can be offered
    in the next cycle.

    Parameters
    ----------
    outputs : int
        Outputs a route can name (at least 1).
    flit_shape : shape-like
        An entry of the flit memory.
    vcs : int
        Virtual channels (at least 1).
    depth : int
        Entries per VC (at least 1).

    Members
    -------
    w_valid, w_vc, w_route, w_flit : In
        A flit written this cycle on VC ``w_vc``: its route (:meth:`route_layout`) and the
        flit itself.
    w_refused : Out(1)
        The write is refused: its VC holds ``depth`` flits (the sender broke its credits).
    offer_valid : Out(1), offer : Out(route_layout(outputs, vcs)), offer_vc : Out(vcs)
        Registers: the route of the head of VC ``offer_vc`` (one-hot), if it holds a flit.
        Reset: nothing offered, VC 0.
    ready : In(outputs).array(vcs)
        ``ready[h]``: the outputs that take a flit on VC ``h`` this cycle.
    request : Out(outputs)
        The offer's output if it is ``ready`` for the offer's VC (0 without an offer).
    take : In(1)
        The offer is taken (ignored when ``offer_valid`` is low): the head leaves its VC.
    pop : Out(vcs)
        One-hot: the VC whose head left this cycle (``take & offer_valid``).
    flit : Out(flit_shape)
        The flit taken in the previous cycle: the flit memory's read register, loaded on every
        clock edge from the offer's address. Its entry is not written again before its credit
        has reached the sender and come back as a flit, so it is still there.
    levels : Out(range(depth + 1)).array(vcs)
        Flits held per VC (registers). Reset: 0.

    Raises
    ------
    TypeError, ValueError
        If ``outputs``, ``vcs`` or ``depth`` is not a positive integer.
    """

    def __init__(self, outputs: int, flit_shape, vcs: int, depth: int) -> None:
        check_int("Outputs", outputs, low=1, high=MAX_RADIX + 1)
        check_int("VCs", vcs, low=1, high=MAX_VCS)
        check_int("Depth", depth, low=1, high=MAX_DEPTH)
        Shape.cast(flit_shape)
        self._outputs = outputs
        self._vcs = vcs
        self._depth = depth
        route = self.route_layout(outputs, vcs)
        super().__init__({
            "w_valid": In(1), "w_vc": In(range(vcs)), "w_route": In(route),
            "w_flit": In(flit_shape), "w_refused": Out(1),
            "offer_valid": Out(1), "offer": Out(route), "offer_vc": Out(vcs, init=1),
            "ready": In(outputs).array(vcs), "request": Out(outputs),
            "take": In(1), "pop": Out(vcs), "flit": Out(flit_shape),
            "levels": Out(range(depth + 1)).array(vcs),
        })

    @staticmethod
    def route_layout(outputs: int, vcs: int) -> data.StructLayout:
        """A route: ``out``, the output (one-hot, 0: none), and ``hop``, the outgoing VC."""
        return data.StructLayout({"out": outputs, "hop": range(vcs)})

    @property
    def outputs(self) -> int:
        return self._outputs

    @property
    def vcs(self) -> int:
        return self._vcs

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        vcs, depth = self._vcs, self._depth
        # VC h holds entries h * depth .. h * depth + depth - 1 of both memories; their depth
        # is rounded up to a power of two, which costs nothing in 16-entry LUT RAM cells (nor
        # in a block RAM).
        size = 1 << (vcs * depth - 1).bit_length()
        # Three copies of the routes, one per read (a VC's first flit, its second, another
        # VC's first): read ports of one memory whose data meet in a multiplexer would be
        # merged by synthesis into one port behind a multiplexed address, which puts the
        # allocation's outcome in front of the memory.
        routes = [Memory(shape=self.offer.shape(), depth=size, init=[]) for _ in range(3)]
        for n, memory in enumerate(routes):
            m.submodules[f"routes{n}"] = memory
        # The flits in block RAM: read by a synchronous port (below), out of the LUTs.
        m.submodules.flits = flits = Memory(shape=self.flit.shape(), depth=size, init=[],
                                            attrs={"ram_style": "block", "no_rw_check": 1})
        base = [h * depth for h in range(vcs)]
        w_addr = [Signal(range(size), init=base[h], name=f"vc{h}_w_addr") for h in range(vcs)]
        r_addr = [Signal(range(size), init=base[h], name=f"vc{h}_r_addr") for h in range(vcs)]
        level = self.levels

        def bump(addr, h):
            return Mux(addr == base[h] + depth - 1, base[h], addr + 1)

        # Writes.
        arriving = [self.w_valid & (self.w_vc == h) for h in range(vcs)]
        push = [arriving[h] & (level[h] != depth) for h in range(vcs)]
        m.d.comb += self.w_refused.eq(any_of(arriving[h] & (level[h] == depth)
                                             for h in range(vcs)))
        for memory, value in [*((r, self.w_route) for r in routes), (flits, self.w_flit)]:
            port = memory.write_port()
            m.d.comb += [port.en.eq(any_of(push)), port.addr.eq(onehot_mux(arriving, w_addr)),
                         port.data.eq(value)]
        for h in range(vcs):
            with m.If(push[h]):
                m.d.sync += w_addr[h].eq(bump(w_addr[h], h))

        # Reads, pops.
        taken = self.take & self.offer_valid
        c = self.offer_vc
        m.d.comb += self.pop.eq(c & taken.replicate(vcs))
        for h in range(vcs):
            # Both sums ready before the pop, which only selects one.
            m.d.sync += level[h].eq(Mux(self.pop[h], level[h] + push[h] - 1, level[h] + push[h]))
            with m.If(self.pop[h]):
                m.d.sync += r_addr[h].eq(bump(r_addr[h], h))

        # The next offer, for both outcomes, from registered state and the write of this
        # cycle. ``c`` is the VC offered; ``other`` the next VC after it (cyclically) holding
        # a flit or receiving one. A VC's first flit is at its read address, its second after
        # it (when a VC holds none or one flit, the flit arriving is its first or second: it is
        # written at that very address).
        has = [(level[h] != 0) | push[h] for h in range(vcs)]
        after = []
        for k in range(vcs):
            order = [(k + j) % vcs for j in range(1, vcs)]
            bits = [0] * vcs
            for n, h in enumerate(order):
                bits[h] = has[h] & ~any_of(has[g] for g in order[:n])
            after.append(Cat(*bits) if vcs > 1 else Cat(0))
        other = Signal(vcs, name="other_vc")
        m.d.comb += other.eq(onehot_mux(c, after))
        other_valid = other.any()

        level_c = onehot_mux(c, level)
        push_c = onehot_mux(c, push)
        addr_c = onehot_mux(c, r_addr)
        addr_c2 = onehot_mux(c, [bump(r_addr[h], h) for h in range(vcs)])
        addr_o = onehot_mux(other, r_addr)
        first, second, first_o = (memory.read_port(domain="comb") for memory in routes)
        m.d.comb += [first.addr.eq(addr_c), second.addr.eq(addr_c2), first_o.addr.eq(addr_o)]
        next_c_valid = (level_c >= 2) | ((level_c == 1) & push_c)
        empty_o = onehot_mux(other, level) == 0

        # After a take: the same VC's next flit, unless the VC is empty or has had its streak
        # while another VC waits (then the other VC's head).
        streak = Signal(range(STREAK), name="streak")
        stay = Signal(name="stay")
        m.d.comb += stay.eq(next_c_valid & ~((streak == STREAK - 1) & other_valid))
        # The route's output is one-hot, so each request bit is the offer's output bit and that
        # output's readiness for the offer's VC.
        ready_hop = onehot_mux([self.offer.hop == h for h in range(vcs)], list(self.ready))
        m.d.comb += self.request.eq(Mux(self.offer_valid, self.offer.out & ready_hop, 0))

        # Without a take: the other VC's head if the offer could not go in the last cycle and
        # that head could (or if there is no offer).
        def can_go(route):
            return (route.out & onehot_mux([route.hop == h for h in range(vcs)],
                                           list(self.ready))).any()

        head_o = Signal(self.offer.shape(), name="other_head")
        m.d.comb += head_o.eq(Mux(empty_o, self.w_route, first_o.data))
        # Both tests are registered (a cycle old when used), to keep them off the allocation.
        stalled, other_ok = Signal(name="stalled"), Signal(name="other_ok")
        m.d.sync += [stalled.eq(self.offer_valid & ~self.request.any()),
                     other_ok.eq(other_valid & can_go(head_o))]
        turn = Signal(name="turn")
        m.d.comb += turn.eq(other_valid & (~self.offer_valid | stalled & other_ok))
        # Every register's next value is prepared for both outcomes, each kept as a signal of
        # its own, so that synthesis does not fold the late ``taken`` into the logic before it
        # and the allocation ends in one multiplexer.
        def both(name, if_taken, if_not, shape):
            pair = [Signal(shape, name=f"{name}_if_{case}", attrs={"keep": 1})
                    for case in ("taken", "not")]
            m.d.comb += [pair[0].eq(if_taken), pair[1].eq(if_not)]
            return Mux(taken, *pair)

        addr = Signal(range(size), name="offer_addr")
        # The flit written this cycle is offered if the VC offered next holds none ahead of it.
        m.d.sync += [
            self.offer_valid.eq(both("valid", stay | other_valid, turn | onehot_mux(c, has), 1)),
            self.offer_vc.eq(both("vc", Mux(~stay & other_valid, other, c),
                                  Mux(turn, other, c), vcs)),
            self.offer.eq(both("offer",
                               Mux(Mux(stay, level_c < 2, empty_o), self.w_route,
                                   Mux(stay, second.data, first_o.data)),
                               Mux(Mux(turn, empty_o, level_c == 0), self.w_route,
                                   Mux(turn, first_o.data, first.data)),
                               self.offer.shape())),
            addr.eq(both("addr", Mux(stay, addr_c2, addr_o), Mux(turn, addr_o, addr_c),
                         range(size))),
            streak.eq(both("streak", Mux(stay, Mux(streak == STREAK - 1, streak, streak + 1), 0),
                           Mux(turn, 0, streak), range(STREAK))),
        ]

        # The flit taken last cycle: the offer's address read on every clock edge. The flit
        # at an offer's address was written an edge before at the latest, and its entry is
        # not written again while it is offered, so the read never meets a write to it.
        read = flits.read_port(domain="sync")
        m.d.comb += [read.addr.eq(addr), self.flit.eq(read.data)]
        return m


class InputUnitModel:
    """Python model of :class:`InputUnit`, one call of :meth:`step` per clock edge.

    The state is what the unit's contract names: the flits per VC, the VC offered, whether it
    has an offer, and the streak of flits taken in a row from that VC.
    """

    def __init__(self, vcs: int, depth: int) -> None:
        self.vcs, self.depth = vcs, depth
        self.queues = [deque() for _ in range(vcs)]
        self.vc, self.valid, self.streak = 0, False, 0
        self.last = None  # the flit taken in the previous cycle
        self.stalled = self.other_ok = False  # last cycle: the offer could not go, the other could

    @property
    def offer(self):
        """The (route, flit) offered, or None."""
        return self.queues[self.vc][0] if self.valid else None

    def step(self, write, take: bool, can_go) -> tuple[bool, object]:
        """Advance one edge. ``write`` is None or ``(vc, route, flit)``, ``can_go(route)``
        whether a route's output takes a flit now; returns ``(refused, flit taken in the
        previous cycle)``."""
        stalled = self.valid and not can_go(self.offer[0])
        taken = take and self.valid
        flit = self.last
        refused = write is not None and len(self.queues[write[0]]) >= self.depth
        self.last = self.queues[self.vc][0][1] if taken else None
        if taken:
            self.queues[self.vc].popleft()
        if write is not None and not refused:
            vc, route, data = write
            self.queues[vc].append((route, data))
        others = [(self.vc + j) % self.vcs for j in range(1, self.vcs)]
        other = next((h for h in others if self.queues[h]), None)
        if taken:
            if self.queues[self.vc] and not (self.streak == STREAK - 1 and other is not None):
                self.streak = min(self.streak + 1, STREAK - 1)
            else:
                self.streak = 0
                self.vc = self.vc if other is None else other
        elif other is not None and (not self.valid or (self.stalled and self.other_ok)):
            self.vc, self.streak = other, 0
        self.stalled = stalled
        self.other_ok = other is not None and can_go(self.queues[other][0][0])
        self.valid = bool(self.queues[self.vc])
        return refused, flit
