"""The PIUMA-style switch: input buffers per virtual channel, credit flow control, p2p routing
by table, and a collective path with strict priority over p2p.

PIUMA, "Switch Architecture for In-network Computing" (Fig. 1): a switch has network ports plus
one port to its core's local memory, a collective engine beside the crossbar, collective
virtual channels with priority over point-to-point traffic, configuration registers, and
credit-based flow control between neighbours.

:class:`SwitchCore` is the fabric with its configuration as plain input signals;
:class:`Switch` adds the register file and its configuration bus.

Pipeline (one flit per cycle per port)
--------------------------------------
========  =================================================================================
cycle 0   the flit is on input link ``i[p]``; a request flit is written into the collective
          path's buffers (partitioned by id); a response flit into the input's response
          buffer, or straight into the input's fork if that is free and the buffer empty;
          a p2p flit's output port is looked up in the input's copy of the routing table (a
          LUT RAM) and written with its outgoing hop VC into the input's memory of routes,
          the flit into its memory of flits (both partitioned by VC,
          :class:`~innet.hw.input_unit.InputUnit`); if it is the next flit of the VC the input
          offers next, its route is loaded into the input's offer register
cycle 1   allocation, from registers: the forks (each input's head response with its id's
          ``resp_out``, and the collective path's flit with its targets) ask for the targets
          they have not left on yet that hold a credit of the flit's VC; each input's offer
          (the route of the head of one p2p VC) asks for its output if that output holds a
          credit of the offer's outgoing VC and the input's fork holds no flit (or gives
          way to the offer's p2p slot). Each output grants one fork (round-robin), else one
          offer (round-robin); the grant takes the output's credit and registers the granted
          source's number as the output's select. A fork whose last target is granted takes
          its next flit; an input whose offer is taken pops the head and loads its next
          offer, prepared for both outcomes from registered state (after a take the same
          VC's next flit, so back-to-back grants have no bubble; after none another VC's
          head)
cycle 2   traversal: the output register loads the flit of the registered select (the
          crossbar: a multiplexer tree per output on the select's bits, over the flits of
          last cycle of the sources that feed it, a p2p flit read from its memory at a
          registered place or the fork's, and the collective path's), and the credit of every
          pop is on the input's link toward its sender
cycle 3   the flit is on output link ``o[q]``
========  =================================================================================

So a flit crosses an idle switch in :data:`HOP_CYCLES` = 3 cycles, p2p or response, and the
collective path's flit taken in cycle ``t`` is on its first output link in cycle ``t + 3``
(measured by ``tests/hw/test_switch.py`` and the cocotb testbench). Allocation starts from
registered state only (the inputs' offers and forks, credit counters) and ends in registers,
and the one crossbar is driven by registered selects over registers and memories read at
registered addresses, so no path runs from a buffer read through allocation into the
crossbar, and none from the collective path into a p2p pop.

No flit turns back on the link it came by: a network port's output is fed by every source
but its own input, so a p2p flit whose route names the network port it arrived on is discarded
as having no route, and a response is not multicast back to the port it came from (minimal and
tree routing never turn back; :mod:`innet.gen.image` refuses such a configuration).

A multicast is a fork: it leaves on each target in the cycle that output grants it, so it
never waits for all its credits at once, and its input takes the next response when the
last target has taken it. The collective path's stream has one flit of room in front of its
fork, so the path's ``ready`` is a register and no path runs from the allocation into the
collective path. The response buffers, the forks and that room hold only a collective flit's
payload, index, id and kind: its p2p fields travel as zero (:mod:`innet.hw.flit`).
A collective flit wins its output over p2p (PIUMA, "Collective Virtual Channel"). So that
collective traffic cannot starve p2p, an output sends at most
``coll_burst`` collective flits in a row while a p2p flit waits for it; then, for a cycle
(the output's p2p *slot*), no fork asks for it, and an input whose p2p offer's route names an
output in its slot lets its fork wait (credit or not), so the p2p flit can go: p2p keeps at
least one cycle in ``coll_burst + 1`` of every output (0 turns the floor off: strict
priority).

Without a collective path (``collective=None``; ``--collective none`` on the command line)
the switch is a p2p switch: no response buffers, forks or stream, no credits of the
collective VCs, and an allocation of p2p offers alone. A flit arriving on a collective VC is
discarded, its credit returned and ``coll_drop`` flagged.

The credit loop is :data:`CREDIT_ROUND_TRIP` cycles: a credit taken at allocation is usable
again 5 cycles later (output register, flit on the link, head of the downstream buffer and
popped, credit on the link, counter updated), so a VC sustains one flit per cycle only with at
least 5 buffer entries. A link with ``k`` extra pipeline stages in each direction needs
``5 + 2k`` entries for full throughput (fewer only cost bandwidth, never correctness).

Wiring
------
Every port is a pair of :func:`~innet.hw.flit.link_signature` channels, ``i[q]`` in and
``o[q]`` out. A bidirectional link between port ``p`` of switch ``a`` and port ``q`` of switch
``b`` is two connections (both switches built with the same parameters)::

    wiring.connect(m, a.o[p], b.i[q])
    wiring.connect(m, b.o[q], a.i[p])

The endpoint sits on port ``radix``: it sends on ``i[radix]`` holding ``buffer_depth`` credits
per VC and receives ``o[radix]`` with ``local_depth`` entries per VC, returning a credit for
each flit it takes (:class:`innet.hw.link.LinkSender` and :class:`innet.hw.link.LinkReceiver`
do both). Ports a node does not use stay unconnected: tie ``i[q].valid`` and ``o[q].credit``
to 0. Configuration goes through ``cfg`` (:mod:`innet.hw.regs`), addresses from
:func:`innet.gen.regmap.switch_map`.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Shape, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.ops import DType, Op, is_supported
from innet.gen.regmap.switch import COLL_BURST, ERROR_FLAGS, MAX_RADIX
from innet.hw.arbiter import RoundRobin, any_of, binary_mux, encode_onehot, onehot_mux
from innet.hw.buffer import Buffer, Bypass
from innet.hw.collective import TIMEOUT_BITS, CollectivePath, config_layout
from innet.hw.credit import CREDIT_ROUND_TRIP, MAX_DEPTH, CreditCounter
from innet.hw.credit import local_depth as default_local_depth
from innet.hw.flit import FlitParams, Kind, bits_for, link_signature
from innet.hw.fork import Fork
from innet.hw.input_unit import InputUnit

__all__ = [
    "CREDIT_ROUND_TRIP",
    "ERROR_FIELDS",
    "HOP_CYCLES",
    "STAGED_FLITS",
    "SWITCH_PROPERTIES",
    "Switch",
    "SwitchCore",
    "default_collective",
    "error_layout",
    "route_layout",
    "route_write_layout",
    "switch_properties",
]

#: Cycles from a flit on an input link to the flit on an output link, idle switch.
HOP_CYCLES = 3

#: Flits an output holds whose credit is taken but which are not yet on its link, at most (the
#: flit granted last cycle): a credit counter reads between the receiver's free entries minus
#: this many, summed over the VCs, and the free entries.
STAGED_FLITS = 1

#: Sticky error flags of a switch, bit 0 upward: the fields of its ``errors`` register
#: (:data:`innet.gen.regmap.switch.ERROR_FLAGS`).
ERROR_FIELDS = ERROR_FLAGS


#: Registers of a collective id that its configuration interlock guards (not ``abort``).
_LOCKED = ("ctrl", "req_in", "req_out", "resp_in", "resp_out")


def _supported_table(mul: bool) -> Const:
    """Bit ``op * 4 + dtype``: the operation code is defined on the data-type code (and is not
    ``mul`` unless ``mul``)."""
    bits = 0
    for op in Op:
        for dtype in DType:
            if is_supported(op, dtype) and (mul or op != Op.MUL):
                bits |= 1 << (int(op) << 2 | int(dtype))
    return Const(bits, 64)


def route_layout(radix: int) -> data.StructLayout:
    """One routing-table entry, mirroring ``route[d]`` of :func:`innet.gen.regmap.switch_map`:
    ``port`` (bits for ``radix + 1``; ``radix`` is the local port) and ``valid``."""
    return data.StructLayout({"port": bits_for(radix + 1), "valid": 1})


def route_write_layout(radix: int, routing_depth: int) -> data.StructLayout:
    """A write of one routing-table entry: ``en``, ``node`` (the destination) and ``entry``
    (:func:`route_layout`)."""
    return data.StructLayout({"en": 1, "node": range(routing_depth),
                              "entry": route_layout(radix)})


def error_layout() -> data.StructLayout:
    """One bit per :data:`ERROR_FIELDS` entry, in that order."""
    return data.StructLayout(dict.fromkeys(ERROR_FIELDS, 1))


def default_collective(params: FlitParams, radix: int, depth: int = CREDIT_ROUND_TRIP):
    """The collective path a switch gets by default: the collective engine
    (:class:`innet.hw.ceng.CollectiveEngine`, in-network reduction) for 32-bit payloads, the
    pass-through (:class:`~innet.hw.collective.CollectivePath`) otherwise (the engine reduces
    32-bit elements only); ``depth`` request flits per (id, input port)."""
    if params.payload_width == 32:
        from innet.hw.ceng import CollectiveEngine

        return CollectiveEngine(params, radix, depth)
    return CollectivePath(params, radix, depth)


def _served_vcs(params: FlitParams, collective) -> int:
    """The VCs a switch keeps credits of: all of them, or the p2p VCs without a collective
    path."""
    return params.p2p_vcs if collective is None else params.vcs


def _check_switch(radix, params, buffer_depth, local_depth, collective, early_links
                  ) -> tuple[int, int, int]:
    """Check the parameters :class:`SwitchCore` and :class:`Switch` share; the radix, buffer
    depth and local depth as ints."""
    radix = check_int("Radix", radix, low=1, high=MAX_RADIX)
    if not isinstance(params, FlitParams):
        raise TypeError(f"Params must be a FlitParams, not {params!r}")
    buffer_depth = check_int("Buffer depth", buffer_depth, low=1, high=MAX_DEPTH)
    if buffer_depth < CREDIT_ROUND_TRIP:
        raise ValueError(f"Buffer depth must be at least {CREDIT_ROUND_TRIP} (the credit "
                         f"round trip) for full throughput, not {buffer_depth}")
    if local_depth is None:
        local_depth = buffer_depth if collective is None else default_local_depth(buffer_depth)
    local_depth = check_int("Local depth", local_depth, low=1, high=MAX_DEPTH)
    if collective is not None and not callable(collective):
        raise TypeError(f"Collective must be a callable building the collective path, or "
                        f"None, not {collective!r}")
    if not isinstance(early_links, bool):
        raise TypeError(f"Early links must be a bool, not {early_links!r}")
    return radix, buffer_depth, local_depth


class SwitchCore(wiring.Component):
    """The switch fabric, configured through plain input signals.

    Parameters
    ----------
    radix : int
        Network ports; port ``radix`` is the local (endpoint) port.
    params : FlitParams
        The flit format (payload width, node ids, collective ids, p2p VCs).
    buffer_depth : int
        Entries per input buffer (per port and VC); also the credits this switch's outputs
        start with toward neighbouring switches. At least :data:`CREDIT_ROUND_TRIP`.
    local_depth : int, optional
        Credits per VC of the local output (the endpoint's receive buffer depth); defaults to
        ``buffer_depth``, and with a collective path :data:`~innet.hw.credit.LOCAL_EXTRA` more
        (:func:`innet.hw.credit.local_depth`: one result per cycle from this switch's root).
        At least 1.
    collective : callable or None, optional
        ``collective(params, radix, depth)`` builds the collective path, its request buffers
        ``buffer_depth`` deep (default
        :func:`default_collective`: the collective engine, reducing in the switch);
        :class:`~innet.hw.collective.CollectivePath` is the pass-through without reduction,
        ``functools.partial(CollectiveEngine, mul=True)`` an engine with multipliers. See
        :mod:`innet.hw.collective` for the contract. ``None`` builds a p2p switch: no
        collective path, no response buffers or forks, credits for the p2p VCs only; a flit
        arriving on a collective VC is discarded (``error_events.coll_drop``) and its credit
        returned, and the collective configuration inputs are ignored.
    early_links : bool
        The network ports' registered outputs (``o[q].valid``, ``o[q].payload`` and
        ``i[q].credit`` for ``q < radix``) carry the value their register loads instead of
        the register, for a wrapper that puts the register at the far end of the link (the
        same cycles; see :class:`innet.hw.network.NetworkNode`'s ``retimed_links``). The local
        port keeps its registers.

    Members
    -------
    i : In(link_signature(params)).array(radix + 1)
        Input links (``i[radix]`` from the endpoint). Each VC has ``buffer_depth`` entries.
    o : Out(link_signature(params)).array(radix + 1)
        Output links (``o[radix]`` to the endpoint); ``valid``/``payload`` are registers
        (but see ``early_links``).
    route_write : In(route_write_layout(radix, routing_depth))
        Writes the routing table: the output port per destination node id. Every input keeps a
        copy of the port numbers in a LUT RAM, looked up by the destination of the flit
        arriving and decoded to one-hot (a memory per input instead of a multiplexer over
        registers); the ``valid`` bits are registers, so that a reset invalidates every entry.
        A write while ``en`` is high applies to flits arriving from the next cycle. An entry
        that is not ``valid`` or names a port above ``radix`` means "no route": such flits are
        discarded (``error_events.no_route``), as is a flit whose entry names the network port
        it arrived on.
    collective : In(config_layout(radix)).array(collective_ids)
        Per-collective-id registers. Those of an enabled id must not change while
        ``coll_busy`` says it is busy (:class:`Switch`'s interlock; see
        :mod:`innet.hw.collective`).
    coll_burst : In(4)
        The p2p floor: an output sends at most this many collective flits in a row while a
        p2p flit waits for it; 0: no limit (strict priority). Default
        :data:`innet.gen.regmap.switch.COLL_BURST`.
    coll_timeout : In(TIMEOUT_BITS)
        The collective watchdog: cycles a reducing id may wait for a missing contributor
        (0: off). See :mod:`innet.hw.collective` for this and the four below.
    coll_abort : In(collective_ids)
        Per id: while high, every flit of the id reaching the collective path is discarded.
    coll_busy : Out(collective_ids)
        Per id: a flit of the id is in the collective path, in a fork or at the head of a
        response buffer, or arrives on an input link in this cycle or arrived in the last.
    coll_timed_out : Out(collective_ids), coll_missing : Out(radix + 1).array(collective_ids)
        Per id: the watchdog fired, and the contributing ports it found missing.
    error_events : Out(error_layout())
        Error events (:data:`ERROR_FIELDS`): a flag is high in the cycle after its error
        happens, from a register, so that no path of the switch ends in the register file
        (``coll_config`` is the register file's, always 0 here). :class:`Switch` keeps them as
        sticky flags in its ``errors`` register.

    Attributes
    ----------
    credit_counts : list of list of Signal
        ``credit_counts[o][v]``: credits output ``o`` holds for VC ``v`` (for testbenches;
        the p2p VCs only without a collective path).
    """

    def __init__(self, radix: int, params: FlitParams, buffer_depth: int = CREDIT_ROUND_TRIP, *,
                 local_depth: int | None = None, collective=default_collective,
                 early_links: bool = False) -> None:
        radix, buffer_depth, local_depth = _check_switch(radix, params, buffer_depth,
                                                         local_depth, collective, early_links)
        self._radix = radix
        self._params = params
        self._buffer_depth = buffer_depth
        self._local_depth = local_depth
        self._collective = collective
        self.early_links = early_links
        ports = radix + 1
        self.credit_counts = [[Signal(range(self._depth(o) + 1), name=f"credits_o{o}_vc{v}")
                               for v in range(_served_vcs(params, collective))]
                              for o in range(ports)]
        super().__init__({
            "i": In(link_signature(params)).array(ports),
            "o": Out(link_signature(params)).array(ports),
            "route_write": In(route_write_layout(radix, params.routing_depth)),
            "collective": In(config_layout(radix)).array(params.collective_ids),
            "coll_burst": In(4, init=COLL_BURST),
            "coll_timeout": In(TIMEOUT_BITS),
            "coll_abort": In(params.collective_ids),
            "coll_busy": Out(params.collective_ids),
            "coll_timed_out": Out(params.collective_ids),
            "coll_missing": Out(ports).array(params.collective_ids),
            "error_events": Out(error_layout()),
        })

    def _depth(self, port: int) -> int:
        return self._local_depth if port == self._radix else self._buffer_depth

    def _link_domain(self, port: int) -> str:
        """The domain of port ``port``'s link registers: ``comb`` for the value they load
        (``early_links``, network ports only)."""
        return "comb" if self.early_links and port < self._radix else "sync"

    @property
    def radix(self) -> int:
        return self._radix

    @property
    def params(self) -> FlitParams:
        return self._params

    @property
    def buffer_depth(self) -> int:
        return self._buffer_depth

    @property
    def local_depth(self) -> int:
        return self._local_depth

    def elaborate(self, platform):
        m = Module()
        p = self._params
        radix, ports, hops = self._radix, self._radix + 1, p.p2p_vcs
        layout = p.layout
        # A p2p flit's route: its output (one-hot) and outgoing hop VC, kept beside the flit
        # in its input's InputUnit.
        entry = InputUnit.route_layout(ports, hops)
        depth = self._buffer_depth
        # The collective path; without one the switch serves the p2p VCs only.
        coll = None if self._collective is None else self._collective(p, radix, depth)
        served = _served_vcs(p, self._collective)

        # Credit counters per output and served VC.
        counters = [[CreditCounter(self._depth(o)) for _ in range(served)] for o in range(ports)]
        for o, row in enumerate(counters):
            for v, counter in enumerate(row):
                m.submodules[f"credit_o{o}_vc{v}"] = counter
                m.d.comb += [counter.give.eq(self.o[o].credit[v]),
                             self.credit_counts[o][v].eq(counter.count)]

        # The crossbar's inputs (``sources``): the input ports, then the collective path's
        # stream, if any. Per output, the grant of last cycle (``sel_valid``, ``sel`` its
        # source's number): a collective fork or a p2p offer.
        ids, sources = p.collective_ids, ports + (coll is not None)
        sel_valid = [Signal(name=f"out{o}_sel_valid") for o in range(ports)]
        # The sources that feed each output: all but a network port's own input (no flit
        # turns back on the link it came by), the stream last.
        feeds = [[s for s in range(sources) if s != o or o == radix] for o in range(ports)]

        def onward(i: int) -> Const:
            """The outputs a flit arriving on input ``i`` may take."""
            return Const((1 << ports) - 1 - (0 if i == radix else 1 << i), ports)

        sel = [Signal(range(len(feeds[o])), name=f"out{o}_sel") for o in range(ports)]
        coll_dropped = []  # collective flits discarded
        if coll is not None:
            # A collective flit carries its payload, index, id and kind (the other fields travel
            # as zero): only those are held in the response buffers and the forks.
            carried = data.StructLayout({"payload": p.payload_width, "index": p.index_width,
                                         "cid": p.cid_width, "kind": Kind})

            def narrow(flit):
                return Cat(*(getattr(flit, f) for f in carried.members))

            def widen(held):
                return Cat(*(getattr(held, f) if f in carried.members
                             else Const(0, Shape.cast(shape).width)
                             for f, shape in layout.members.items()))

            def overlay(held, flit, use):
                """``flit`` with the carried fields of ``held`` while ``use``; the other fields
                stay ``flit``'s (the output register clears them under a collective flit)."""
                return Cat(*(Mux(use, Value.cast(getattr(held, f)), Value.cast(getattr(flit, f)))
                             if f in carried.members else getattr(flit, f)
                             for f in layout.members))

            # The fields a collective flit does not carry, as a mask of the flit's bits.
            p2p_only = Const(sum(((1 << field.width) - 1) << field.offset
                                 for name, field in layout if name not in carried.members),
                             layout.size)

            # The p2p floor: a registered pulse that keeps collective flits off an output for
            # one cycle after ``coll_burst`` collective flits in a row while p2p waited.
            slot = [Signal(name=f"out{o}_p2p_slot") for o in range(ports)]
            slots = Cat(slot)
            # Collective path: request flits in, one stream of flits with their targets out.
            m.submodules.collective = coll
            m.d.comb += [coll.abort.eq(self.coll_abort), coll.timeout.eq(self.coll_timeout),
                         self.coll_timed_out.eq(coll.timed_out)]
            for c in range(ids):
                m.d.comb += [coll.config[c].eq(self.collective[c]),
                             self.coll_missing[c].eq(coll.missing[c])]

            # Forks (:class:`~innet.hw.fork.Fork`): per source, the collective flit it
            # multicasts. An input port's fork holds the head of its response buffer, with its
            # id's ``resp_out``; the stream's fork the collective path's flit, with its targets.
            forks = [Fork(carried, ports, ids) for _ in range(sources)]
            for s, fork in enumerate(forks):
                m.submodules[f"fork{s}"] = fork
                m.d.comb += fork.abort.eq(self.coll_abort)
                coll_dropped.append(fork.dropped)

            def load_fork(s: int, valid, flit, targets):
                """Offer ``flit`` (with ``valid``, to ``targets``) to fork ``s``; returns
                whether the fork takes it."""
                m.d.comb += [forks[s].offer_valid.eq(valid), forks[s].offer.eq(flit),
                             forks[s].offer_targets.eq(targets)]
                return forks[s].load

            # The stream's fork, with one flit of room in front of it (``spare``), so that the
            # collective path's ``ready`` is a register: the fork takes the spare flit, else the
            # stream's; the stream's flit goes into the spare register when the fork does not take
            # it. Each has the VC of its flit (one-hot over the collective VCs: the request VCs by
            # id, then the response VC).
            stream, result = ports, coll.result
            spare_valid = Signal(name="spare_valid")
            spare = Signal(carried, name="spare_flit")
            spare_targets = Signal(ports, name="spare_targets")
            spare_vc = Signal(ids + 1, name="spare_vc")
            stream_vc = Signal(ids + 1, name="stream_vc")
            result_vc = Cat(*[(result.payload.kind == Kind.REQ) & (result.payload.cid == c)
                              for c in range(ids)], result.payload.kind == Kind.RESP)
            taking = result.valid & ~spare_valid
            m.d.comb += result.ready.eq(~spare_valid)
            offered = Signal(carried, name="stream_offered")
            m.d.comb += offered.eq(Mux(spare_valid, spare, narrow(result.payload)))
            load = load_fork(stream, spare_valid | taking, offered,
                             Mux(spare_valid, spare_targets, result.targets))
            with m.If(load):
                m.d.sync += stream_vc.eq(Mux(spare_valid, spare_vc, result_vc))
            with m.If(spare_valid & load):
                m.d.sync += spare_valid.eq(0)
            with m.Elif(taking & ~load):
                m.d.sync += spare_valid.eq(1)
            # An empty spare register loads the stream's flit whether or not it keeps it (its
            # content does not matter while it is empty), so its enable is a register.
            with m.If(~spare_valid):
                m.d.sync += [spare.eq(narrow(result.payload)), spare_targets.eq(result.targets),
                             spare_vc.eq(result_vc)]
            coll_vcs = list(range(hops, p.vcs))
            # What the collective path may offer: outputs that can take one more flit of a VC than
            # the stream's fork and spare flit still send there.
            streaming = forks[stream]
            for k, v in enumerate(coll_vcs):
                room = Cat(counters[o][v].count
                           > ((streaming.valid & streaming.left[o] & stream_vc[k]).as_unsigned()
                              + (spare_valid & spare_targets[o] & spare_vc[k]))
                           for o in range(ports))
                if k < ids:
                    m.d.comb += coll.credit_req[k].eq(room)
                else:
                    m.d.comb += coll.credit_resp.eq(room)
            stream_credit = Cat(any_of(stream_vc[k] & counters[o][v].available
                                       for k, v in enumerate(coll_vcs)) for o in range(ports))
            resp_credit = Cat(counters[o][p.resp_vc].available for o in range(ports))

        # The routing table's valid bits (its ports are in each input's LUT RAM).
        routed = Signal(p.routing_depth, name="route_valid")
        with m.If(self.route_write.en):
            m.d.sync += routed.bit_select(self.route_write.node, 1).eq(
                self.route_write.entry.valid)

        bad_vc, overflow, no_route = [], [], []
        pops = [[Signal(name=f"pop_i{i}_vc{v}") for v in range(p.vcs)] for i in range(ports)]
        units, resp_heads = [], []
        in_data = []  # per source: the flit it was granted last cycle
        coll_req = []  # per source: the outputs its fork asks for
        p2p_req = []  # per input: the outputs its p2p offer asks for

        # Per p2p VC: the outputs holding a credit of it.
        held = [Cat(counters[o][h].available for o in range(ports)) for h in range(hops)]

        for i in range(ports):
            link = self.i[i]
            good = Signal(name=f"in{i}_good")
            m.d.comb += good.eq(p.vc_valid(link.payload))

            # Stage 1, routing at write: the output (one-hot, none: no route) of the destination,
            # and the outgoing hop VC. The table holds port numbers, decoded after the lookup
            # (a port above ``radix`` decodes to none).
            table = Memory(shape=len(self.route_write.entry.port), depth=p.routing_depth,
                           init=[])
            m.submodules[f"route_i{i}"] = table
            write, lookup = table.write_port(), table.read_port(domain="comb")
            dst = link.payload.dst
            m.d.comb += [write.en.eq(self.route_write.en), write.addr.eq(self.route_write.node),
                         write.data.eq(self.route_write.entry.port),
                         lookup.addr.eq(dst[:len(lookup.addr)])]
            known = routed.bit_select(dst, 1) & (dst < p.routing_depth)  # else no such node
            hop_in = link.payload.hop
            hop_up = Mux(hop_in >= hops - 1, hops - 1, hop_in + (1 if i < radix else 0))
            new = Signal(entry, name=f"in{i}_entry")
            m.d.comb += [
                new.out.eq(Cat(known & (lookup.data == o) for o in range(ports)) & onward(i)),
                new.hop.eq(Mux(lookup.data == radix, 0, hop_up)),
            ]

            # The p2p VCs: queues of routes and flits, and the registered offer of one head.
            unit = InputUnit(ports, layout, hops, depth)
            m.submodules[f"p2p_i{i}"] = unit
            units.append(unit)
            # (A p2p flit's VC is its hop, decoded here from the header directly.)
            m.d.comb += [
                unit.w_valid.eq(link.valid & (link.payload.kind == Kind.P2P) & (hop_in < hops)),
                unit.w_vc.eq(hop_in), unit.w_route.eq(new), unit.w_flit.eq(link.payload),
            ]
            request = link.valid & good & (link.payload.kind == Kind.REQ)
            arriving = link.valid & good & (link.payload.kind == Kind.RESP)
            full = Signal(name=f"in{i}_full")
            if coll is None:
                # No collective path: a collective flit is discarded and its credit returned.
                for c in range(ids):
                    m.d.comb += pops[i][p.req_vc(c)].eq(request & (link.payload.cid == c))
                m.d.comb += [pops[i][p.resp_vc].eq(arriving), full.eq(unit.w_refused)]
                coll_dropped.append(request | arriving)
            else:
                # Request flits go to the collective path, which buffers them per id.
                m.d.comb += [coll.req[i].valid.eq(request), coll.req[i].payload.eq(link.payload)]
                for c in range(ids):
                    m.d.comb += pops[i][p.req_vc(c)].eq(coll.req_pop[c][i])

                # Responses: a buffer, whose head the input's fork takes (a flit arriving at an
                # empty buffer goes straight into a free fork, through the buffer's bypass),
                # multicast to its id's resp_out but the port it came by.
                resp = Buffer(carried, depth)
                m.submodules[f"resp_i{i}"] = resp
                queued = Bypass(m, resp, arriving, narrow(link.payload), name=f"in{i}_resp")
                resp_heads.append((queued.waiting, resp.r.payload))
                head = queued.head
                resp_out = onehot_mux([(head.cid == c) & self.collective[c].enable
                                       for c in range(ids)],
                                      [self.collective[c].resp_out for c in range(ids)])
                targets = resp_out & onward(i)
                load = load_fork(i, queued.waiting | arriving, head, targets)
                queued.take(load)
                m.d.comb += [pops[i][p.resp_vc].eq(load),
                             full.eq(unit.w_refused | resp.w.valid & ~resp.w.ready)]
            bad_vc.append(link.valid & ~good)
            overflow.append(full)

            # Stage 2, p2p: the input's offer (a register) wants its output if that output
            # holds a credit of the offer's outgoing VC. An offer with no route is dropped.
            offer = unit.offer
            m.d.comb += [unit.ready[h].eq(held[h]) for h in range(hops)]
            no_route.append(unit.offer_valid & ~offer.out.any())

            # The flit granted last cycle: the p2p flit with its outgoing hop, or the fork's.
            hop_reg = Signal(p.hop_width, name=f"in{i}_hop")
            p2p_data = Signal(layout, name=f"in{i}_p2p")
            m.d.sync += hop_reg.eq(offer.hop)
            m.d.comb += [p2p_data.eq(unit.flit), p2p_data.hop.eq(hop_reg)]
            if coll is None:
                p2p_req.append(unit.request)
                in_data.append(p2p_data)
            else:
                # Per input one grant a cycle, whose turn it is decided from registers: the
                # fork's while it holds a flit, unless its p2p offer's route names an output in
                # its slot. In its turn the fork asks for its targets that hold a credit of the
                # response VC and are not in their p2p slot, and the p2p offer asks for
                # nothing, even while the fork waits for a credit (a response waits for a p2p
                # flit only in a one-cycle slot, so this adds no cycle of waits); else the p2p
                # offer asks.
                p2p_first = unit.offer_valid & (offer.out & slots).any()
                fork_turn = Signal(name=f"in{i}_fork_turn")
                m.d.comb += fork_turn.eq(forks[i].valid & ~forks[i].aborted & ~p2p_first)
                asks = Signal(ports, name=f"in{i}_coll_req")
                m.d.comb += asks.eq(Mux(fork_turn, forks[i].left & resp_credit & ~slots, 0))
                coll_req.append(asks)
                p2p = Signal(ports, name=f"in{i}_p2p_req")
                m.d.comb += p2p.eq(Mux(fork_turn, 0, unit.request))
                p2p_req.append(p2p)
                forked = Signal(name=f"in{i}_forked")
                data_reg = Signal(layout, name=f"in{i}_data")
                m.d.sync += forked.eq(forks[i].taken.any())
                m.d.comb += data_reg.eq(overlay(forks[i].sent, p2p_data, forked))
                in_data.append(data_reg)

            # Credits back to the sender, registered (at the far end with early links).
            m.d[self._link_domain(i)] += link.credit.eq(Cat(pops[i]))

        if coll is not None:
            asks = Signal(ports, name="stream_coll_req")
            m.d.comb += asks.eq(Mux(forks[stream].valid & ~forks[stream].aborted,
                                    forks[stream].left & stream_credit & ~slots, 0))
            coll_req.append(asks)
            in_data.append(widen(forks[stream].sent))

        # Stage 2, allocation per output: collective forks first (round-robin over the
        # sources), else p2p offers (round-robin over the inputs). The grant is registered as
        # the output's select, and the output's credit is taken.
        p2p_taken = [[] for _ in range(ports)]
        burst = self.coll_burst
        for o in range(ports):
            feed = feeds[o]
            inputs = [s for s in feed if s < ports]  # those with a p2p offer, first in feed
            p2p_rr = RoundRobin(len(inputs))
            m.submodules[f"out{o}_p2p_rr"] = p2p_rr
            coll_win = Signal(name=f"out{o}_coll_win")  # stays 0 without a collective path
            p2p_win = Signal(name=f"out{o}_p2p_win")
            m.d.comb += [
                p2p_rr.requests.eq(Cat(p2p_req[i][o] for i in inputs)),
                p2p_rr.take.eq(~coll_win), p2p_win.eq(p2p_rr.requests.any() & ~coll_win),
            ]
            for k, i in enumerate(inputs):
                p2p_taken[i].append(p2p_rr.grant[k] & ~coll_win)
            grant = encode_onehot(p2p_rr.grant)
            if coll is not None:
                coll_rr = RoundRobin(len(feed))
                m.submodules[f"out{o}_coll_rr"] = coll_rr
                m.d.comb += [
                    coll_rr.requests.eq(Cat(coll_req[s][o] for s in feed)), coll_rr.take.eq(1),
                    # A fork wins the output when one asks: the p2p pops depend on the forks'
                    # requests only, not on their round robin.
                    coll_win.eq(coll_rr.requests.any()),
                ]
                for s in range(sources):
                    m.d.comb += forks[s].taken[o].eq(
                        coll_rr.grant[feed.index(s)] if s in feed else 0)
                grant = Mux(coll_win, encode_onehot(coll_rr.grant), grant)
            m.d.sync += [sel_valid[o].eq(coll_win | p2p_win), sel[o].eq(grant)]

            # Stage 3: the output register, from the crossbar (the registered select over the
            # flits of last cycle of the sources that feed the output). A collective flit's
            # fields other than those it carries are cleared there, by a registered bit beside
            # the select, not at each source.
            link = self.o[o]
            crossed = binary_mux(sel[o], [in_data[s] for s in feed])
            if coll is not None:
                sel_coll = Signal(name=f"out{o}_sel_coll")
                m.d.sync += sel_coll.eq(coll_win)
                crossed = crossed & ~(p2p_only & sel_coll.replicate(layout.size))
            m.d[self._link_domain(o)] += [link.valid.eq(sel_valid[o]), link.payload.eq(crossed)]

            # Credits taken: a p2p flit's by its outgoing hop, a response's on the response VC,
            # the stream's flit's on its VC.
            hop = onehot_mux(p2p_rr.grant, [units[i].offer.hop for i in inputs])
            for v in range(hops):
                m.d.comb += counters[o][v].take.eq(p2p_win & (hop == v))
            if coll is None:
                continue
            from_stream = coll_rr.grant[-1]
            for v in range(hops, p.vcs):
                if v < p.resp_vc:
                    take = from_stream & stream_vc[v - hops]
                else:
                    take = coll_rr.grant[:-1].any() | from_stream & stream_vc[ids]
                m.d.comb += counters[o][v].take.eq(take)

            # The p2p floor: count the collective flits granted in a row while p2p waits;
            # after ``coll_burst`` of them the next cycle is a slot, in which collective flits
            # do not ask for the output, so the p2p flit goes.
            waiting = Signal(name=f"out{o}_p2p_waiting")
            run = Signal(4, name=f"out{o}_coll_run")
            run_next = Signal(4, name=f"out{o}_coll_run_next")
            m.d.sync += waiting.eq(any_of(unit.request[o] for unit in units))
            m.d.comb += run_next.eq(Mux(p2p_win, 0, Mux(coll_win & waiting & (run != 15),
                                                        run + 1, run)))
            m.d.sync += [run.eq(run_next),
                         slot[o].eq((burst != 0) & waiting & ~slot[o] & (run_next >= burst))]
        for i, unit in enumerate(units):
            m.d.comb += [unit.take.eq(any_of(p2p_taken[i]) | no_route[i]),
                         *[pops[i][h].eq(unit.pop[h]) for h in range(hops)]]

        # Error events (the Switch's register file keeps them as sticky flags).
        flags = {
            "bad_vc": any_of(bad_vc),
            "overflow": any_of(overflow),
            "no_route": any_of(no_route),
            "coll_drop": any_of(coll_dropped),
            # A counter's overflow, or a credit of a VC the switch does not serve.
            "credit": any_of([c.error for row in counters for c in row]
                             + [self.o[o].credit[served:].any() for o in range(ports)]),
        }
        if coll is not None:
            # Busy per id: the collective path's, a response or a stream flit of the id here,
            # or a collective flit of the id on an input link in this cycle or the last (the
            # registers of the others count it only from the cycle after that), so that the
            # interlock never lets a configuration change under a flit.
            here = [Signal(name=f"coll{c}_here") for c in range(ids)]
            arrived = [Signal(name=f"coll{c}_arrived") for c in range(ids)]
            for c in range(ids):
                arriving = any_of(link.valid & (link.payload.kind != Kind.P2P)
                                  & (link.payload.cid == c) for link in self.i)
                m.d.sync += [arrived[c].eq(arriving), here[c].eq(any_of(
                    [forks[s].valid & forks[s].id[c] for s in range(sources)]
                    + [spare_valid & (spare.cid == c)]
                    + [waiting & (head.cid == c) for waiting, head in resp_heads]))]
                m.d.comb += self.coll_busy[c].eq(coll.busy[c] | here[c] | arriving | arrived[c])
            flags.update({
                "overflow": flags["overflow"] | coll.req_refused,
                "coll_drop": flags["coll_drop"] | coll.dropped,
                "coll_index": coll.mismatch,
                "coll_op": coll.unsupported,
                "coll_timeout": coll.stalled,
            })
        for name, value in flags.items():
            m.d.sync += getattr(self.error_events, name).eq(value)
        return m


class Switch(wiring.Component):
    """A PIUMA-style switch with its register file: the component a network instantiates.

    :class:`SwitchCore` configured by a :class:`~innet.hw.regs.RegisterFile` built from
    :func:`innet.gen.regmap.switch_map` ``(radix, collective_ids, routing_depth,
    node_id_width=params.node_width)``. Every port is a plain signal, so the switch can be
    emitted to Verilog as it is (``innet verilog switch``).

    Parameters
    ----------
    radix : int
        Network ports (the topology's maximum degree); the local port is port ``radix``.
    payload_width : int
        Bits of a flit's payload (one element).
    buffer_depth : int
        Entries per input port and VC; at least :data:`CREDIT_ROUND_TRIP`.
    collective_ids : int
        Collective ids (register copies and request VCs).
    routing_depth : int
        Routing-table entries = node ids.
    p2p_vcs : int
        Hop-indexed p2p VCs (at least the network diameter for deadlock-free minimal routing).
    index_width, tag_width : int
        Bits of a flit's element index and p2p tag.
    local_depth : int, optional
        The endpoint's receive buffer depth per VC (credits of the local output); the default
        is :class:`SwitchCore`'s.
    collective : callable, optional
        Builds the collective path (see :class:`SwitchCore`).
    early_links : bool
        See :class:`SwitchCore`.

    Members
    -------
    i : In(link_signature(params)).array(radix + 1)
        Input links; ``i[radix]`` comes from the endpoint.
    o : Out(link_signature(params)).array(radix + 1)
        Output links; ``o[radix]`` goes to the endpoint.
    cfg : In(bus_signature(regmap.address_width))
        Configuration bus (:mod:`innet.hw.regs`).
    errors : Out(error_layout())
        Sticky error flags (:data:`ERROR_FIELDS`), set the cycle after their error: the
        ``errors`` register (``RW1C``), which software reads and clears by writing 1 through
        ``cfg``. Reset 0.

    Raises
    ------
    TypeError, ValueError
        On a parameter of the wrong type or out of range, with a message naming it.
    """

    def __init__(self, radix: int, payload_width: int = 32, buffer_depth: int = CREDIT_ROUND_TRIP,
                 collective_ids: int = 4, routing_depth: int = 64, *, p2p_vcs: int = 2,
                 index_width: int = 16, tag_width: int = 8, local_depth: int | None = None,
                 collective=default_collective, early_links: bool = False) -> None:
        from innet.gen.regmap import switch_map
        from innet.hw.regs import bus_signature

        params = FlitParams(payload_width=payload_width, routing_depth=routing_depth,
                            collective_ids=collective_ids, p2p_vcs=p2p_vcs,
                            index_width=index_width, tag_width=tag_width)
        radix, buffer_depth, local_depth = _check_switch(radix, params, buffer_depth,
                                                         local_depth, collective, early_links)
        self._radix = radix
        self._params = params
        self._buffer_depth = buffer_depth
        self._local_depth = local_depth
        self._collective = collective
        self._early_links = early_links
        self._map = switch_map(radix, collective_ids, routing_depth,
                               node_id_width=params.node_width)
        ports = radix + 1
        depth = [self._local_depth if o == radix else buffer_depth for o in range(ports)]
        self.credit_counts = [[Signal(range(depth[o] + 1), name=f"credits_o{o}_vc{v}")
                               for v in range(_served_vcs(params, collective))]
                              for o in range(ports)]
        super().__init__({
            "i": In(link_signature(params)).array(ports),
            "o": Out(link_signature(params)).array(ports),
            "cfg": In(bus_signature(self._map.address_width)),
            "errors": Out(error_layout()),
        })

    @property
    def radix(self) -> int:
        return self._radix

    @property
    def params(self) -> FlitParams:
        """The flit format every neighbour and testbench must use."""
        return self._params

    @property
    def buffer_depth(self) -> int:
        return self._buffer_depth

    @property
    def local_depth(self) -> int:
        return self._local_depth

    @property
    def regmap(self):
        """The :class:`innet.gen.regmap.Map` of this switch's registers."""
        return self._map

    def elaborate(self, platform):
        from innet.hw.regs import RegisterFile

        m = Module()
        p = self._params
        # The collective path is built here, so that the interlock knows whether it has a
        # multiplier (the pass-through has no ``mul``: it takes ``mul`` on any data type
        # that defines it).
        path = (None if self._collective is None
                else self._collective(p, self._radix, self._buffer_depth))
        core = SwitchCore(self._radix, p, self._buffer_depth, local_depth=self._local_depth,
                          collective=None if path is None else lambda *_: path,
                          early_links=self._early_links)
        regs = RegisterFile(self._map, refusable=[f"coll[{c}].{name}" for name in _LOCKED
                                                  for c in range(p.collective_ids)])
        m.submodules.core = core
        m.submodules.regs = regs
        wiring.connect(m, wiring.flipped(self.cfg), regs.bus)
        for port in range(self._radix + 1):
            wiring.connect(m, wiring.flipped(self.i[port]), core.i[port])
            wiring.connect(m, core.o[port], wiring.flipped(self.o[port]))
        cfg = regs.config
        # The core's copies of the routing table are written with the register file's.
        bus, first = regs.bus, self._map["route[0]"]
        port, valid = first.field("port"), first.field("valid")
        node = bus.addr - first.address
        assert all(self._map[f"route[{d}]"].address == first.address + d
                   for d in range(p.routing_depth)), "the routing table is one word per node"
        m.d.comb += [
            core.route_write.en.eq(bus.w_en & (bus.addr >= first.address)
                                   & (node < p.routing_depth)),
            core.route_write.node.eq(node),
            core.route_write.entry.port.eq(bus.w_data[port.offset:port.offset + port.width]),
            core.route_write.entry.valid.eq(bus.w_data[valid.offset]),
        ]
        for c in range(p.collective_ids):
            reg = cfg["coll"][c]
            target = core.collective[c]
            m.d.comb += [
                target.enable.eq(reg["ctrl"]["enable"]),
                target.op.eq(reg["ctrl"]["op"]),
                target.dtype.eq(reg["ctrl"]["dtype"]),
                target.req_in.eq(reg["req_in"]["ports"]),
                target.req_out.eq(reg["req_out"]["port"]),
                target.root.eq(reg["req_out"]["root"]),
                target.resp_in.eq(reg["resp_in"]["port"]),
                target.resp_out.eq(reg["resp_out"]["ports"]),
            ]
        m.d.comb += core.coll_burst.eq(cfg["coll_burst"]["cycles"])
        m.d.comb += core.coll_timeout.eq(cfg["coll_timeout"]["cycles"])
        for c in range(p.collective_ids):
            m.d.comb += [
                core.coll_abort[c].eq(regs.field(f"coll[{c}].abort", "drain")),
                regs.field(f"coll[{c}].status", "busy").eq(core.coll_busy[c]),
                regs.field(f"coll[{c}].status", "timed_out").eq(core.coll_timed_out[c]),
                regs.field(f"coll[{c}].missing", "ports").eq(core.coll_missing[c]),
            ]
        refused = Signal()
        m.d.comb += refused.eq(self._refused(regs.bus, cfg, core.coll_busy,
                                             getattr(path, "mul", True)))
        events = Signal(error_layout())
        m.d.comb += [events.eq(core.error_events), events.coll_config.eq(refused),
                     regs.refuse.eq(refused),
                     regs.events["errors"].eq(events),
                     self.errors.eq(cfg["errors"])]
        for o, row in enumerate(self.credit_counts):
            for v, count in enumerate(row):
                m.d.comb += count.eq(core.credit_counts[o][v])
        return m

    def _refused(self, bus, cfg, busy, mul: bool) -> Value:
        """The configuration interlock: high while the bus writes a register of an enabled,
        busy collective id (only its ``abort`` stays writable), or a ``ctrl`` word that enables
        an operation its data type does not define (:func:`innet.gen.ops.is_supported`), or
        ``mul`` on a switch whose collective path reduces without a multiplier (an engine
        built with ``mul=False``; the pass-through, which never reduces, takes ``mul``)."""
        supported = _supported_table(mul)
        terms = []
        for c in range(self._params.collective_ids):
            ctrl = self._map[f"coll[{c}].ctrl"]
            locked = [a for name in _LOCKED
                      for reg in [self._map[f"coll[{c}].{name}"]]
                      for a in range(reg.address, reg.address + reg.words)]
            hit = any_of(bus.addr == a for a in locked)
            terms.append(hit & cfg["coll"][c]["ctrl"]["enable"] & busy[c])
            op, dtype, enable = (ctrl.field(n) for n in ("op", "dtype", "enable"))
            code = Cat(bus.w_data[dtype.offset:dtype.offset + dtype.width],
                       bus.w_data[op.offset:op.offset + op.width])
            terms.append((bus.addr == ctrl.address) & bus.w_data[enable.offset]
                         & ~supported.bit_select(code, 1))
        return bus.w_en & any_of(terms)


# -- formal properties -------------------------------------------------------------------------

#: The cycles within which the watched flit of the delivery properties sees a flit ahead of it
#: leave its input's buffer (and, after its own, leaves): at radix 2 its output may serve the
#: two other inputs first, and 3 fails (a counterexample in 6 steps, for either property).
DELIVERY_STALL = 4

#: The formal properties of :class:`SwitchCore`, by name (:func:`switch_properties`).
SWITCH_PROPERTIES = {
    "no-credit-no-send": "no output sends a flit of a VC while its receiver's buffer for that "
                         "VC is full, whatever the senders (within their credits), the "
                         "receivers, the routes and the collective configuration do",
    "route": "a p2p flit that enters leaves at most once, unchanged but for its hop, and only "
             "on the port its route names (never when it has no route, nor back on the "
             "network port it came by), whatever else is in flight",
    "multicast": "a collective response that enters leaves unchanged, at most once on each "
                 "port and only on the ports of its id's resp_out but the network port it "
                 "came by (never when the id is disabled or does not exist), and on every one "
                 "of them before any response that entered on its port after it leaves, "
                 "whatever other responses and p2p flits do",
    "delivery": "a p2p flit that enters with a route leaves: it never waits "
                f"{DELIVERY_STALL} cycles for a flit ahead of it to leave its input's buffer, "
                "nor, once it has left the buffer itself, to leave the switch, so it leaves "
                f"within (depth + 1) * {DELIVERY_STALL} cycles of entering, whatever the other "
                "p2p flits and the routing table do (no collective flits enter), while the "
                "receivers return each credit the cycle after its flit",
    "multicast-delivery": "a collective response that enters leaves on every port of its "
                          "id's resp_out but the network port it came by: it never waits "
                          f"{DELIVERY_STALL} cycles for a flit ahead of it to leave its "
                          "input's buffer, nor, once it has left the buffer itself, to leave "
                          "on the last of them, whatever other responses do (no p2p flits "
                          "enter), while the receivers return each credit the cycle after its "
                          "flit",
}


def switch_properties(name: str, radix: int = 2, depth: int = CREDIT_ROUND_TRIP, *,
                      block: type = SwitchCore) -> tuple[Module, list[Signal]]:
    """A formal harness: ``block(radix, params, depth, local_depth=2, collective=CollectivePath)``
    (``local_depth=depth`` for the delivery properties) with small flits (1-bit payload, 3 node
    ids, 1 collective id, 1 p2p VC) driven by free inputs, with the property ``name`` of
    :data:`SWITCH_PROPERTIES` as ``Assert``, what the neighbours promise as ``Assume``, and a
    ``Cover`` that shows it is not vacuous (a receiver's buffer filled; the watched flit
    leaving on a network port, for ``delivery`` after waiting behind another).

    The senders on the inputs keep the link protocol (:func:`~innet.hw.flit.link_signature`):
    a flit of VC ``v`` only while the harness's count of that sender's credits is positive,
    and only on an existing VC. Each receiver holds the flits it got and returns a credit for
    one of them whenever it likes. The routing table is written freely, at any time (every
    entry starts invalid); the collective configuration is free but constant. For ``route``
    one flit is watched: the free constant ``watched`` is a p2p flit's content (but its hop)
    of which at most one arrives, and its route is the table's entry when it arrives (the
    harness keeps a copy of the table); one symbolic flit stands for all. ``multicast``
    watches a response flit the same way (no other flit, of any kind, has its content; no
    request flits enter; a response's p2p fields are 0, as the link protocol has them; two
    index bits, the watched flit's high one 0), and marks the responses that enter on its port
    after it with the index's high bit (no other response has it): the watched flit has left
    on its whole target set when the first of them leaves. ``delivery`` watches a p2p flit
    as ``route`` does, one that arrives with a route (valid, and not back to the network port
    it came by), while every receiver returns a credit in each cycle it holds a flit; it
    counts the credits the flit's input owes before the flit has left the input's buffer (the
    sender's credits out when it arrives, and its own), and the cycles since the last of them
    came back. ``multicast-delivery`` counts the same for a response watched as by
    ``multicast`` (one index bit, no marking; no p2p flits enter), until it has left on its
    whole target set. The switch's own logic is unchanged; ``block`` may be a variant (a
    mutation) with the same interface.

    Returns
    -------
    (Module, list of Signal)
        The harness and its free inputs.

    Raises
    ------
    ValueError
        If ``name`` is not a property of :data:`SWITCH_PROPERTIES`.
    """
    from amaranth import Value
    from amaranth.hdl import Assert, Assume, Cover

    from innet.hw.collective import CollectivePath, config_layout
    from innet.hw.testing import free_constant

    if name not in SWITCH_PROPERTIES:
        raise ValueError(f"Switch property must be one of {', '.join(SWITCH_PROPERTIES)}, "
                         f"not {name!r}")
    # Two index bits for multicast, whose harness marks responses by the high one.
    p = FlitParams(payload_width=1, routing_depth=3, collective_ids=1, p2p_vcs=1,
                   index_width=2 if name == "multicast" else 1, tag_width=1)
    ports = radix + 1
    m = Module()
    # The endpoint's receive buffer: filled in a few cycles; for delivery as deep as the
    # others, so that a receiver returning every credit at once takes a flit every cycle.
    delivers = name.endswith("delivery")
    local = depth if delivers else 2
    m.submodules.dut = dut = block(radix, p, depth, local_depth=local,
                                   collective=CollectivePath)
    started = Signal(name="started")
    m.d.sync += started.eq(1)
    free = []

    def constant(shape, label: str):
        return free_constant(m, shape, label, started, free)

    # The routing table, written freely, and the harness's copy of it.
    write = Signal(route_write_layout(radix, p.routing_depth), name="route_write")
    free.append(Value.cast(write))
    m.d.comb += [dut.route_write.eq(write), Assume(write.node < p.routing_depth)]
    routes = [Signal(route_layout(radix), name=f"route_{d}") for d in range(p.routing_depth)]
    for d in range(p.routing_depth):
        with m.If(write.en & (write.node == d)):
            m.d.sync += routes[d].eq(write.entry)
    configs = [constant(config_layout(radix), f"collective_{c}")
               for c in range(p.collective_ids)]
    m.d.comb += [dut.collective[c].eq(configs[c]) for c in range(p.collective_ids)]
    m.d.comb += dut.coll_burst.eq(constant(4, "coll_burst"))

    # The senders: a flit of VC v only with a credit of v.
    sender_credits = {}
    for i in range(ports):
        valid, flit = Signal(name=f"in{i}_valid"), Signal(p.layout, name=f"in{i}_flit")
        free += [valid, Value.cast(flit)]
        m.d.comb += [dut.i[i].valid.eq(valid), dut.i[i].payload.eq(flit),
                     Assume(~valid | p.vc_valid(flit))]
        if name in ("route", "delivery"):
            m.d.comb += Assume(~valid | (flit.kind == Kind.P2P))
        if name == "multicast-delivery":
            m.d.comb += Assume(~valid | (flit.kind == Kind.RESP))
        if name.startswith("multicast"):
            # Requests do not enter; a response's p2p fields travel as zero (the link protocol).
            m.d.comb += [Assume(~valid | (flit.kind != Kind.REQ)),
                         Assume(~valid | (flit.kind != Kind.RESP)
                                | ((flit.tag == 0) & (flit.src == 0) & (flit.dst == 0)
                                   & (flit.hop == 0)))]
        for v in range(p.vcs):
            held = Signal(range(depth + 1), init=depth, name=f"in{i}_vc{v}_credits")
            sender_credits[i, v] = held
            send = valid & (p.vc_of(flit) == v)
            m.d.comb += Assume(~send | (held != 0))
            m.d.sync += held.eq(held - send + dut.i[i].credit[v])

    # The receivers: flits held per output and VC, a credit back for one whenever they like.
    sent_full = []
    for o in range(ports):
        link = dut.o[o]
        for v in range(p.vcs):
            room = local if o == radix else depth
            held = Signal(range(depth + 2), name=f"out{o}_vc{v}_held")
            back = Signal(name=f"out{o}_vc{v}_credit")
            free.append(back)
            arrives = link.valid & (p.vc_of(link.payload) == v)
            m.d.comb += [link.credit[v].eq(back), Assume(~back | (held != 0))]
            if delivers:
                m.d.comb += Assume(back == (held != 0))  # each credit the cycle after
            m.d.sync += held.eq(held + arrives - back)
            if name == "no-credit-no-send":
                m.d.comb += Assert(~arrives | (held < room))
            sent_full.append(arrives & (held == room - 1))
    if name == "no-credit-no-send":
        m.d.comb += Cover(any_of(sent_full))
        return m, free

    watched = constant(p.layout, "watched")
    kind = Kind.RESP if name.startswith("multicast") else Kind.P2P
    m.d.comb += Assume(watched.kind == kind)
    ignored = ("hop", "kind") if kind == Kind.RESP else ("hop",)

    def content(flit) -> Value:
        return Cat(*(getattr(flit, f) for f in p.widths if f not in ignored))

    entered, left = Signal(name="watched_entered"), Signal(name="watched_left")
    arrivals = [dut.i[i].valid & (content(dut.i[i].payload) == content(watched))
                for i in range(ports)]
    arrive = any_of(arrivals)
    m.d.comb += Assume(sum(arrivals) <= 1)
    m.d.comb += Assume(~(entered & arrive))  # at most one, ever
    for i in range(ports):
        m.d.comb += Assume(~arrivals[i] | (dut.i[i].payload.kind == kind))
    leave = [dut.o[o].valid & (content(dut.o[o].payload) == content(watched))
             for o in range(ports)]
    if kind == Kind.RESP:
        # Per port: the watched flit has left there; the port it entered on, and the later
        # responses that entered there (marked: the index's high bit set).
        done = [Signal(name=f"watched_left_{o}") for o in range(ports)]
        port = Signal(range(ports), name="watched_port")
        with m.If(arrive):
            m.d.sync += [entered.eq(1), port.eq(encode_onehot(Cat(arrivals)))]
        for o in range(ports):
            with m.If(leave[o]):
                m.d.sync += done[o].eq(1)
        # Its id's resp_out, but the network port it came by.
        onward = Cat(port != o for o in range(radix))
        targets = Mux(configs[0].enable & (watched.cid == 0),
                      configs[0].resp_out & Cat(onward, 1), 0)
        if delivers:
            finished = Cat(done) == targets
            behind = _ranking(m, dut, p, depth, arrivals, sender_credits, entered, finished)
            m.d.comb += [
                *[Assert(~leave[o] | entered & ~done[o] & targets[o]) for o in range(ports)],
                Cover(leave[1] & done[0] & behind),
            ]
            return m, free
        mark = p.index_width - 1
        m.d.comb += Assume(~watched.index[mark])
        for i in range(ports):
            flit = dut.i[i].payload
            m.d.comb += Assume(~(dut.i[i].valid & (flit.kind == Kind.RESP) & flit.index[mark])
                               | entered & (port == i))
        later = any_of(dut.o[o].valid & (dut.o[o].payload.kind == Kind.RESP)
                       & dut.o[o].payload.index[mark] for o in range(ports))
        m.d.comb += [
            *[Assert(~leave[o] | entered & ~done[o] & targets[o]) for o in range(ports)],
            *[Assert(~leave[o] | (dut.o[o].payload.kind == Kind.RESP)) for o in range(ports)],
            Assert(~later | (Cat(done) == targets)),
            Cover(leave[1] & done[0]),
            Cover(later & targets[0] & targets[1]),
        ]
        return m, free
    with m.If(arrive):
        m.d.sync += entered.eq(1)
    with m.If(any_of(leave)):
        m.d.sync += left.eq(1)
    m.d.comb += Assert(~any_of(leave) | (entered & ~left))  # never before it came, never twice
    # Its route: the table's entry for its destination, as it arrives and from then on.
    now = Signal(route_layout(radix), name="watched_route_now")
    with m.Switch(watched.dst):
        for d in range(p.routing_depth):
            with m.Case(d):
                m.d.comb += now.eq(routes[d])
    entry = Signal(route_layout(radix), name="watched_route")
    came = Signal(ports, name="watched_port")  # the port it arrived on, one-hot
    with m.If(arrive):
        m.d.sync += [entry.eq(now), came.eq(Cat(arrivals))]
    routed = entry.valid & (entry.port <= radix)
    if name == "delivery":
        # It has a route when it arrives: valid, and not back to the network port it came by.
        turned = any_of(arrivals[q] & (now.port == q) for q in range(radix))
        m.d.comb += Assume(~arrive | (now.valid & (now.port <= radix) & ~turned))
        behind = _ranking(m, dut, p, depth, arrivals, sender_credits, entered, left)
        m.d.comb += Cover(any_of(leave[o] for o in range(radix)) & behind)
        return m, free
    m.d.comb += [
        *[Assert(~leave[o] | (routed & (entry.port == o) & (~came[o] if o < radix else 1)))
          for o in range(ports)],
        Cover(any_of(leave[o] for o in range(radix))),
    ]
    return m, free


def _ranking(m: Module, dut, p: FlitParams, depth: int, arrivals: list, sender_credits: dict,
             entered: Signal, finished: Value) -> Signal:
    """The ranking of the delivery properties: asserts that the watched flit, arriving by
    ``arrivals`` (one per input), never waits :data:`DELIVERY_STALL` cycles for a credit on its
    input and VC while it owes one (one per flit ahead of it, counted from the sender's credits
    out, and its own), nor after the last, until ``finished``. Returns a signal that is high
    once it has arrived behind another flit."""
    from amaranth.hdl import Assert

    ports = len(arrivals)
    came = Signal(ports, name="watched_input")
    due = Signal(range(depth + 1), name="watched_due")
    stall = Signal(range(DELIVERY_STALL + 1), name="watched_stall")
    behind = Signal(name="watched_behind")
    vc = Signal(range(p.vcs), name="watched_vc")
    for q in range(ports):
        with m.If(arrivals[q]):
            m.d.sync += [came.eq(1 << q), vc.eq(p.vc_of(dut.i[q].payload))]
            for v in range(p.vcs):
                with m.If(p.vc_of(dut.i[q].payload) == v):
                    # The credits coming back as it arrives are for flits that have left (an
                    # input's credit is registered).
                    ahead = depth - sender_credits[q, v] - dut.i[q].credit[v]
                    m.d.sync += [due.eq(ahead + 1), behind.eq(ahead != 0)]
    credit = any_of(dut.i[q].credit[v] & came[q] & (vc == v)
                    for q in range(ports) for v in range(p.vcs))
    with m.If(entered & ~finished):
        with m.If(credit & (due != 0)):
            m.d.sync += [due.eq(due - 1), stall.eq(0)]
        with m.Elif(stall != DELIVERY_STALL):
            m.d.sync += stall.eq(stall + 1)
    m.d.comb += Assert(~entered | finished | (stall < DELIVERY_STALL))
    return behind
