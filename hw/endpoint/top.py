"""The endpoint: a local vector memory on a switch's local port, with the collective intrinsic,
the step engine and a register file.

PIUMA, "Network Overview": "every switch has direct access to the core's local memory via one
of the ports"; "Logical Computation": the collective intrinsic. The step engine offloads the
host-style algorithms of Swing (NSDI'24) to the same endpoint.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.gen.regmap import MAX_VECTOR_DEPTH
from innet.hw.credit import CREDIT_ROUND_TRIP, MAX_DEPTH
from innet.hw.credit import local_depth as default_local_depth
from innet.hw.endpoint.engine import StepEngine
from innet.hw.endpoint.intrinsic import Intrinsic, status_layout
from innet.hw.endpoint.protocol import CLASS_BITS, Message
from innet.hw.flit import FlitParams, Kind, link_signature, stream_signature

__all__ = ["ERROR_FIELDS", "Endpoint"]

#: Sticky error flags of an endpoint, bit 0 upward.
ERROR_FIELDS = {
    "overflow": "a flit arrived for a full receive buffer (the switch ignored its credits)",
    "stray": "a flit arrived that an endpoint never receives (a request, a p2p flit on a hop "
             "VC above 0, or p2p message class 3); it was discarded",
}

#: Bits of an element (the uint32 patterns of innet.gen.ops; the ALU is 32 bits wide).
ELEMENT_BITS = 32


class Endpoint(wiring.Component):
    """An endpoint on a switch's local port.

    It holds a vector memory of ``vector_depth`` 32-bit elements (uint32 bit patterns of
    :mod:`innet.gen.ops`) and runs, on command through its registers
    (:func:`innet.gen.regmap.endpoint_map`):

    - the collective intrinsic (:class:`~innet.hw.endpoint.intrinsic.Intrinsic`): ``coll.cmd``
      (``cid``, ``mode``), ``coll.count``, write ``coll.ctrl.start``; elements
      ``vec_base ..`` leave as request flits, one per cycle, and responses are written back;
      ``coll.status.done`` rises when all are in;
    - the step engine (:class:`~innet.hw.endpoint.engine.StepEngine`): ``engine.cfg``
      (``steps``, ``op``, ``dtype``) and the ``step[k]`` table, write ``engine.ctrl.start``;
      the protocol is :mod:`innet.hw.endpoint.protocol` (clear to send per entry). The table
      is kept in memory (one per register of an entry; block RAM for a long table), not in
      flip-flops, and is not reset.

    Only one of the two runs at a time; a start while the other runs is refused (its
    ``status.error``). Host p2p traffic passes through ``p2p_tx``/``p2p_rx`` at any time.

    Configuration bus and memory window
    -----------------------------------
    ``cfg`` is the configuration bus of :mod:`innet.hw.regs`, ``address_width`` bits wide.
    Word addresses below ``2 ** regmap.address_width`` are the registers; from
    :attr:`memory_base` on, address ``memory_base + e`` is element ``e`` of the vector memory
    (absolute, not relative to ``vec_base``), read and written like a register (read data one
    cycle later). The window is for loading inputs and reading results while both the intrinsic
    and the step engine are idle: while either runs (from the cycle after the write of its
    start, when the intrinsic reads its first element), window writes are ignored and reads
    give 0. Addresses between the registers and the window, and beyond ``vector_depth``, read
    0.

    Parameters
    ----------
    params : FlitParams
        The flit format of the switch (``switch.params``); ``payload_width`` must be 32,
        ``tag_width`` at least 2 (the message class of :mod:`~innet.hw.endpoint.protocol`).
    vector_depth : int
        Elements of the vector memory (and of the step engine's scratch buffer), 1 to
        ``2 ** params.index_width`` (element indices travel in the flit's ``index``) and at
        most :data:`innet.gen.regmap.MAX_VECTOR_DEPTH`.
    step_depth : int
        Step-table entries, 1 to ``2 ** params.index_width`` (a CTS carries its entry in the
        ``index``) and at most :data:`innet.gen.regmap.MAX_STEP_DEPTH`.
    buffer_depth : int
        The switch's input buffer per VC (``switch.buffer_depth``): this endpoint's send
        credits.
    local_depth : int, optional
        This endpoint's receive buffer per VC (the switch's ``local_depth``). At least
        :data:`innet.hw.credit.CREDIT_ROUND_TRIP` for one flit per cycle; by default
        :func:`innet.hw.credit.local_depth` of ``buffer_depth``, for one result per cycle from
        a switch with a collective path.
    node_id_width : int, optional
        Bits of a node id in the registers; by default ``params.node_width`` (as the switch).
    mul : bool
        Build the multiplier of the step engine's ALU (``Op.MUL``).
    src_loc_at : int
        Stack frames above the caller to attribute the component to (Amaranth's convention).

    Members
    -------
    tx : Out(link_signature(params))
        To the switch's local input ``i[radix]``.
    rx : In(link_signature(params))
        From the switch's local output ``o[radix]``.
    cfg : In(bus_signature(address_width))
        Registers and memory window (see above).
    p2p_tx : In(stream_signature(params))
        Host p2p flits to send. The endpoint sends them as ``kind = P2P``, ``hop = 0``,
        ``src = node_id``, with the two low tag bits cleared (message class HOST); ``dst``,
        ``index``, ``payload`` and the upper tag bits are the host's.
    p2p_rx : Out(stream_signature(params))
        Host p2p flits received (class HOST). They share the receive buffer with the step
        engine's flits: the host may stall, but must not wait for the network to take them.
    coll_status, engine_status : Out(status_layout())
        ``busy``, ``done``, ``error`` of the intrinsic and of the step engine (also readable as
        ``coll.status`` and ``engine.status``).
    quiet : Out(1)
        Nothing runs, nothing is buffered or in flight on the local link, every credit is back
        and no CTS is held: the endpoint may be reprogrammed.
    errors : Out(StructLayout(ERROR_FIELDS))
        Sticky link errors (:data:`ERROR_FIELDS`).

    Raises
    ------
    TypeError, ValueError
        On a parameter of the wrong type or out of range, with a message naming it.
    """

    def __init__(self, params: FlitParams, *, vector_depth: int, step_depth: int = 16,
                 buffer_depth: int = CREDIT_ROUND_TRIP, local_depth: int | None = None,
                 node_id_width: int | None = None, mul: bool = True, src_loc_at: int = 0) -> None:
        from innet.gen.regmap import MAX_STEP_DEPTH, endpoint_map
        from innet.hw.regs import bus_signature

        if not isinstance(params, FlitParams):
            raise TypeError(f"Params must be a FlitParams, not {params!r}")
        if params.payload_width != ELEMENT_BITS:
            raise ValueError(f"Endpoint elements are {ELEMENT_BITS} bits: the payload width "
                             f"must be {ELEMENT_BITS}, not {params.payload_width}")
        if params.tag_width < CLASS_BITS:
            raise ValueError(f"Endpoint needs a tag width of at least {CLASS_BITS} (the message "
                             f"class), not {params.tag_width}")
        limit = 1 << params.index_width
        why = f" (a {params.index_width}-bit flit index)"
        check_int("Vector depth", vector_depth, low=1, high=MAX_VECTOR_DEPTH)
        if vector_depth > limit:
            raise ValueError(f"Vector depth must be at most {limit}{why}, not {vector_depth}")
        check_int("Step depth", step_depth, low=1,
                  high=MAX_STEP_DEPTH if limit >= MAX_STEP_DEPTH else None)
        if step_depth > limit:
            raise ValueError(f"Step depth must be at most {limit}{why}, not {step_depth}")
        buffer_depth = check_int("Buffer depth", buffer_depth, low=1, high=MAX_DEPTH)
        if local_depth is None:
            local_depth = default_local_depth(buffer_depth)
        local_depth = check_int("Local depth", local_depth, low=1, high=MAX_DEPTH)
        if node_id_width is None:
            node_id_width = params.node_width
        check_int("Node id width", node_id_width, low=1, high=32)
        if not isinstance(mul, bool):
            raise TypeError(f"Multiplier option must be a bool, not {mul!r}")
        self._params = params
        self._vector_depth = vector_depth
        self._step_depth = step_depth
        self._buffer_depth = buffer_depth
        self._local_depth = local_depth
        self._mul = mul
        self._map = endpoint_map(params.collective_ids, step_depth, vector_depth,
                                 node_id_width=node_id_width)
        super().__init__({
            "tx": Out(link_signature(params)),
            "rx": In(link_signature(params)),
            "cfg": In(bus_signature(self._map.bus_address_width)),
            "p2p_tx": In(stream_signature(params)),
            "p2p_rx": Out(stream_signature(params)),
            "coll_status": Out(status_layout()),
            "engine_status": Out(status_layout()),
            "quiet": Out(1),
            "errors": Out(data.StructLayout(dict.fromkeys(ERROR_FIELDS, 1))),
        }, src_loc_at=src_loc_at + 1)

    @classmethod
    def for_switch(cls, switch, *, vector_depth: int, step_depth: int = 16,
                   **kwargs) -> Endpoint:
        """An endpoint matching ``switch`` (its flit format, buffer and local depths)."""
        return cls(switch.params, vector_depth=vector_depth, step_depth=step_depth,
                   buffer_depth=switch.buffer_depth, local_depth=switch.local_depth,
                   src_loc_at=1, **kwargs)

    @property
    def params(self) -> FlitParams:
        return self._params

    @property
    def vector_depth(self) -> int:
        return self._vector_depth

    @property
    def step_depth(self) -> int:
        return self._step_depth

    @property
    def buffer_depth(self) -> int:
        return self._buffer_depth

    @property
    def local_depth(self) -> int:
        return self._local_depth

    @property
    def regmap(self):
        """The :class:`innet.gen.regmap.Map` of this endpoint's registers."""
        return self._map

    @property
    def memory_base(self) -> int:
        """Bus word address of element 0 of the vector memory (the map's memory window)."""
        return self._map.memory_base

    @property
    def address_width(self) -> int:
        """Bits of the configuration bus address (registers and memory window)."""
        return self._map.bus_address_width

    def elaborate(self, platform):
        from innet.hw.link import LinkReceiver, LinkSender
        from innet.hw.regs import RegisterFile

        m = Module()
        p = self._params
        depth = self._vector_depth
        m.submodules.regs = regs = RegisterFile(self._map, tables=("step",))
        m.submodules.memory = memory = Memory(shape=ELEMENT_BITS, depth=depth, init=[])
        r1, r2, w = memory.read_port(), memory.read_port(), memory.write_port()
        m.submodules.intrinsic = intr = Intrinsic(p, depth)
        m.submodules.engine = eng = StepEngine(p, depth, self._step_depth, mul=self._mul)
        m.submodules.sender = sender = LinkSender(p, self._buffer_depth, inputs=3)
        m.submodules.receiver = receiver = LinkReceiver(p, self._local_depth)
        wiring.connect(m, sender.link, wiring.flipped(self.tx))
        wiring.connect(m, wiring.flipped(self.rx), receiver.link)

        def reg(register: str, name: str):
            return regs.field(register, name)

        node_id = reg("node_id", "id")
        base = reg("vec_base", "index")

        # -- commands and status ---------------------------------------------------------------
        m.d.comb += [
            intr.start.eq(reg("coll.ctrl", "start")), intr.cid.eq(reg("coll.cmd", "cid")),
            intr.mode.eq(reg("coll.cmd", "mode")), intr.count.eq(reg("coll.count", "count")),
            intr.base.eq(base), intr.blocked.eq(eng.status.busy),
            eng.start.eq(reg("engine.ctrl", "start")),
            eng.steps.eq(reg("engine.cfg", "steps")), eng.op.eq(reg("engine.cfg", "op")),
            eng.dtype.eq(reg("engine.cfg", "dtype")), eng.base.eq(base),
            eng.node_id.eq(node_id), eng.blocked.eq(intr.status.busy),
            self.coll_status.eq(intr.status), self.engine_status.eq(eng.status),
        ]
        for name in ("busy", "done", "error"):
            m.d.comb += [reg("coll.status", name).eq(intr.status[name]),
                         reg("engine.status", name).eq(eng.status[name])]
        m.d.comb += [reg("coll.sent", "count").eq(intr.sent),
                     reg("coll.received", "count").eq(intr.received),
                     reg("engine.current", "step").eq(eng.current)]
        # The step table, in the register file's memories, through their read port.
        entry, step = eng.table_data, regs.step_data
        m.d.comb += [
            regs.step_addr.eq(eng.table_addr), regs.step_en.eq(eng.table_en),
            entry.send.eq(step.flags.send), entry.recv.eq(step.flags.recv),
            entry.reduce.eq(step.flags.reduce),
            entry.send_peer.eq(step.send_peer.node), entry.send_first.eq(step.send_first.index),
            entry.send_count.eq(step.send_count.count),
            entry.recv_peer.eq(step.recv_peer.node), entry.recv_first.eq(step.recv_first.index),
            entry.recv_count.eq(step.recv_count.count),
        ]

        # -- send: requests, the engine's CTS and DATA, host p2p ----------------------------------
        wiring.connect(m, intr.tx, sender.i[0])
        wiring.connect(m, eng.tx, sender.i[1])
        host = sender.i[2]
        m.d.comb += [
            host.valid.eq(self.p2p_tx.valid), self.p2p_tx.ready.eq(host.ready),
            host.payload.eq(self.p2p_tx.payload),
            host.payload.kind.eq(Kind.P2P), host.payload.hop.eq(0),
            host.payload.src.eq(node_id),
            host.payload.tag.eq(self.p2p_tx.payload.tag & ~((1 << CLASS_BITS) - 1)),
        ]

        # -- receive: p2p VC 0 by message class, responses to the intrinsic -----------------------
        stray = Signal()
        p2p = receiver.o[0]
        cls = p2p.payload.tag[:CLASS_BITS]
        for target, message in ((eng.rx_cts, Message.CTS), (eng.rx_data, Message.DATA),
                                (self.p2p_rx, Message.HOST)):
            m.d.comb += [target.valid.eq(p2p.valid & (cls == message)),
                         target.payload.eq(p2p.payload)]
        with m.Switch(cls):
            with m.Case(Message.CTS):
                m.d.comb += p2p.ready.eq(eng.rx_cts.ready)
            with m.Case(Message.DATA):
                m.d.comb += p2p.ready.eq(eng.rx_data.ready)
            with m.Case(Message.HOST):
                m.d.comb += p2p.ready.eq(self.p2p_rx.ready)
            with m.Default():
                m.d.comb += [p2p.ready.eq(1), stray.eq(p2p.valid)]
        wiring.connect(m, receiver.o[p.resp_vc], intr.rx)
        for v in range(1, p.vcs):
            if v != p.resp_vc:
                m.d.comb += receiver.o[v].ready.eq(1)
                with m.If(receiver.o[v].valid):
                    m.d.comb += stray.eq(1)
        with m.If(stray):
            m.d.sync += self.errors.stray.eq(1)
        m.d.comb += self.errors.overflow.eq(receiver.overflow)

        # -- vector memory: intrinsic, engine or the bus window ------------------------------------
        ibusy, ebusy = intr.status.busy, eng.status.busy
        # The intrinsic owns the memory from the cycle its start is taken.
        idle = ~(ibusy | ebusy | intr.reading)
        bus = self.cfg
        map_words = 1 << self._map.address_width
        in_window = bus.addr >= self.memory_base
        element = bus.addr[:self._map.bus_address_width - 1]
        in_memory = in_window & (element < depth)
        in_regs = bus.addr < map_words
        m.d.comb += [regs.bus.addr.eq(bus.addr), regs.bus.w_data.eq(bus.w_data),
                     regs.bus.w_en.eq(bus.w_en & in_regs)]
        m.d.comb += [r2.addr.eq(eng.rd2_addr), r2.en.eq(1), eng.rd2_data.eq(r2.data),
                     intr.rd_data.eq(r1.data), eng.rd_data.eq(r1.data)]
        # The intrinsic reads its first element in the cycle it starts, before it is busy.
        with m.If(intr.reading):
            m.d.comb += [r1.addr.eq(intr.rd_addr), r1.en.eq(intr.rd_en)]
        with m.Elif(ebusy):
            m.d.comb += [r1.addr.eq(eng.rd_addr), r1.en.eq(eng.rd_en)]
        with m.Else():
            m.d.comb += [r1.addr.eq(element), r1.en.eq(1)]
        with m.If(ibusy):
            m.d.comb += [w.addr.eq(intr.wr_addr), w.data.eq(intr.wr_data), w.en.eq(intr.wr_en)]
        with m.Elif(ebusy):
            m.d.comb += [w.addr.eq(eng.wr_addr), w.data.eq(eng.wr_data), w.en.eq(eng.wr_en)]
        with m.Else():
            m.d.comb += [w.addr.eq(element), w.data.eq(bus.w_data),
                         w.en.eq(bus.w_en & in_memory & idle)]
        read_memory = Signal()
        read_regs = Signal()
        m.d.sync += [read_memory.eq(in_memory & idle), read_regs.eq(in_regs)]
        m.d.comb += bus.r_data.eq(Mux(read_memory, r1.data,
                                      Mux(read_regs, regs.bus.r_data, 0)))

        # -- quiet -------------------------------------------------------------------------------
        buffered = Signal()
        credits_home = Signal()
        m.d.comb += [
            buffered.eq(Cat(receiver.o[v].valid for v in range(p.vcs)).any()),
            credits_home.eq(Cat(sender.credits[v] == self._buffer_depth
                                for v in range(p.vcs)).all()),
            self.quiet.eq(idle & ~buffered & credits_home & ~sender.link.valid
                          & ~eng.cts_held),
        ]
        return m
