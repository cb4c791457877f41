"""The step engine: runs a host-style allreduce step table (Swing, recursive doubling, ring).

Swing (NSDI'24), Sections 2-4: at each step a rank sends a contiguous block range to a peer and
receives one from a (possibly different) peer, reducing it into its vector (reduce-scatter) or
copying it (allgather). The engine runs the table of :func:`innet.gen.regmap.endpoint_map`
entry by entry with the clear-to-send protocol of :mod:`innet.hw.endpoint.protocol`, which
explains why it can neither lose data nor deadlock.
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from innet.hw.alu import ALU
from innet.hw.endpoint.intrinsic import status_layout
from innet.hw.endpoint.protocol import CLASS_BITS, Message, entry_bits
from innet.hw.flit import FlitParams, Kind, stream_signature

__all__ = ["StepEngine", "entry_layout"]


def entry_layout(params: FlitParams, vector_depth: int) -> data.StructLayout:
    """One step-table entry as the engine reads it (the ``step[k]`` registers): ``send``,
    ``recv``, ``reduce``, ``send_peer``, ``send_first``, ``send_count``, ``recv_peer``,
    ``recv_first``, ``recv_count``; peers in ``params.node_width`` bits, element indices and
    counts in ``vector_depth.bit_length()`` bits."""
    iw = vector_depth.bit_length()
    nw = params.node_width
    return data.StructLayout({
        "send": 1, "recv": 1, "reduce": 1,
        "send_peer": nw, "send_first": iw, "send_count": iw,
        "recv_peer": nw, "recv_first": iw, "recv_count": iw,
    })


def _tag(entry, message: Message):
    """The tag of a CTS or DATA flit: the entry's low bits above the class."""
    if entry is None:
        return Const(int(message), CLASS_BITS)
    return Cat(Const(int(message), CLASS_BITS), entry)


class StepEngine(wiring.Component):
    """Runs ``steps`` entries of a step table over the p2p channel.

    Per entry (see :mod:`innet.hw.endpoint.protocol`): a CTS flit to ``recv_peer``; a snapshot
    of ``memory[base + send_first ..][:send_count]`` into the scratch buffer; once a CTS for the
    entry is held, the snapshot leaves as DATA flits to ``send_peer`` (element indices relative
    to ``base``); DATA flits from ``recv_peer`` are reduced into the vector through an
    :class:`~innet.hw.alu.ALU` (``combine(op, dtype, local, received)``) or copied. The entry
    ends when all of it is done and the last result is written.

    Timing: an entry with nothing to do takes 2 cycles; one that moves data takes the CTS's and
    the first data flit's trips through the network plus one cycle per element plus the
    reduction pipeline (:data:`innet.hw.alu.LATENCY` + 1 cycles).

    Parameters
    ----------
    params : FlitParams
        The flit format.
    vector_depth : int
        Elements of the vector memory (and of the scratch buffer).
    step_depth : int
        Step-table entries.
    mul : bool
        Build the ALU's multiplier.

    Members
    -------
    start : In(1)
        Start strobe. Refused (``error`` set, ``done`` cleared) while ``blocked`` or ``busy``
        or when ``steps`` exceeds ``step_depth``.
    steps, op, dtype, base, node_id : In
        The ``engine.cfg`` registers, ``vec_base`` and the node id (latched at start, except
        ``node_id``).
    table_addr, table_en : Out(range(step_depth)), Out(1)
    table_data : In(entry_layout(params, vector_depth))
        A synchronous read port of the step table (the endpoint's register file keeps it in
        memory): ``table_data`` holds the entry at ``table_addr`` of the last cycle with
        ``table_en`` high. The engine reads entry ``k`` in the cycle ``k`` is set, for the entry's
        load, then entry ``k + 1``, which it holds while entry ``k`` runs (for the early CTS),
        so the table is written before the start: entry 0 is read in the cycle ``start`` is
        taken, and a write during a run may be missed.
    blocked : In(1)
        The intrinsic owns the memory.
    status : Out(status_layout())
        ``busy`` while running; ``done`` from the end to the next start; ``error`` (sticky until
        the next start): a refused start, a DATA flit that does not belong to the current entry
        (wrong source, entry or index, or more than ``recv_count``; discarded), a CTS flit
        for an entry beyond the table or one already held, an operation the data type does
        not have (its results are 0).
    current : Out(range(step_depth + 1))
        The entry being run; ``steps`` when done.
    cts_held : Out(1)
        Some CTS bit is set (a peer allowed a send that has not happened yet).
    tx : Out(stream_signature(params))
        CTS and DATA flits.
    rx_data, rx_cts : In(stream_signature(params))
        Received DATA flits (taken at line rate; see the protocol) and CTS flits (always
        taken, whatever the engine does).
    rd_addr, rd_en, rd_data
        Synchronous read port of the vector memory for the snapshot (used while ``busy``).
    rd2_addr, rd2_data
        Second synchronous read port (always enabled): the local operand of a reduction.
    wr_addr, wr_data, wr_en
        Write port of the vector memory (used while ``busy``).
    """

    def __init__(self, params: FlitParams, vector_depth: int, step_depth: int, *,
                 mul: bool = True) -> None:
        self._params = params
        self._depth = vector_depth
        self._steps = step_depth
        self._mul = mul
        iw = vector_depth.bit_length()
        aw = max(1, (vector_depth - 1).bit_length())
        pw = params.payload_width
        self._aw = aw
        super().__init__({
            "start": In(1), "steps": In(step_depth.bit_length()), "op": In(4), "dtype": In(2),
            "base": In(iw), "node_id": In(params.node_width),
            "table_addr": Out(range(step_depth)), "table_en": Out(1),
            "table_data": In(entry_layout(params, vector_depth)),
            "blocked": In(1),
            "status": Out(status_layout()), "current": Out(range(step_depth + 1)),
            "cts_held": Out(1),
            "tx": Out(stream_signature(params)),
            "rx_data": In(stream_signature(params)), "rx_cts": In(stream_signature(params)),
            "rd_addr": Out(aw), "rd_en": Out(1), "rd_data": In(pw),
            "rd2_addr": Out(aw), "rd2_data": In(pw),
            "wr_addr": Out(aw), "wr_data": Out(pw), "wr_en": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self._params
        depth, steps_max = self._depth, self._steps
        iw = depth.bit_length()
        aw = self._aw
        st = self.status
        k = self.current
        eb = entry_bits(p)

        steps = Signal.like(self.steps)
        op = Signal(4)
        dtype = Signal(2)
        base = Signal(iw)
        cur = Signal(entry_layout(p, depth))
        running = Signal()  # an entry is loaded and in progress
        loading = Signal()  # the entry k is loaded this cycle
        k_next = Signal.like(k)  # k in the next cycle
        m.d.comb += k_next.eq(k)
        m.d.sync += k.eq(k_next)

        # -- CTS bits: one per entry, set by arriving CTS flits, cleared by the send ----------
        cts = Signal(steps_max)
        cts_set = Signal(steps_max)
        cts_clear = Signal(steps_max)
        got = self.rx_cts.payload.index
        m.d.comb += self.rx_cts.ready.eq(1)
        with m.If(self.rx_cts.valid):
            with m.If(got < steps_max):
                m.d.comb += cts_set.eq(Const(1, steps_max) << got[:max(1, steps_max.bit_length())])
                with m.If((cts & cts_set).any()):
                    m.d.sync += st.error.eq(1)
            with m.Else():
                m.d.sync += st.error.eq(1)
        m.d.sync += cts.eq((cts | cts_set) & ~cts_clear)
        m.d.comb += self.cts_held.eq(cts.any())

        # -- sequencing -------------------------------------------------------------------------
        complete = Signal()
        with m.If(self.start):
            with m.If(self.blocked | st.busy | (self.steps > steps_max)):
                m.d.sync += [st.error.eq(1), st.done.eq(0)]
            with m.Else():
                m.d.sync += [st.error.eq(0), st.done.eq(0), steps.eq(self.steps),
                             op.eq(self.op), dtype.eq(self.dtype), base.eq(self.base)]
                m.d.comb += k_next.eq(0)
                with m.If(self.steps == 0):
                    m.d.sync += st.done.eq(1)
                with m.Else():
                    m.d.sync += [st.busy.eq(1), loading.eq(1)]
        with m.If(loading):
            m.d.sync += [cur.eq(self.table_data), loading.eq(0), running.eq(1)]
        with m.If(complete):
            m.d.sync += running.eq(0)
            m.d.comb += k_next.eq(k + 1)
            with m.If(k + 1 == steps):
                m.d.sync += [st.busy.eq(0), st.done.eq(1)]
            with m.Else():
                m.d.sync += loading.eq(1)

        # -- CTS to recv_peer -------------------------------------------------------------------
        cts_todo = Signal()
        early = Signal()  # the CTS of entry k + 1 went out during entry k (or k + 1 has none)
        with m.If(loading):
            m.d.sync += [cts_todo.eq(self.table_data.recv & ~early), early.eq(0)]

        # -- the table's read port: entry k_next as k is set (for the load), then k + 1 (held
        # while entry k runs) ------------------------------------------------------------------
        wanted = Mux(loading, k + 1, k_next)
        m.d.comb += [self.table_addr.eq(Mux(wanted < steps_max, wanted, 0)),
                     self.table_en.eq(~running | complete)]

        # -- snapshot: memory[base + send_first + j] -> scratch[j] --------------------------------
        m.submodules.scratch = scratch = Memory(shape=p.payload_width, depth=depth, init=[])
        sc_w = scratch.write_port()
        sc_r = scratch.read_port()
        snap_issued = Signal(iw)  # reads issued
        snapped = Signal(iw)  # elements in the scratch buffer
        snap_v = Signal()
        snap_j = Signal(iw)
        snap = running & cur.send & (snap_issued < cur.send_count)
        m.d.comb += [self.rd_en.eq(snap),
                     self.rd_addr.eq(base + cur.send_first + snap_issued)]
        m.d.sync += [snap_v.eq(snap), snap_j.eq(snap_issued)]
        with m.If(snap):
            m.d.sync += snap_issued.eq(snap_issued + 1)
        m.d.comb += [sc_w.en.eq(snap_v), sc_w.addr.eq(snap_j), sc_w.data.eq(self.rd_data)]
        with m.If(snap_v):
            m.d.sync += snapped.eq(snap_j + 1)

        # -- send the snapshot once a CTS for k is held -----------------------------------------
        send_go = Signal()
        send_idx = Signal(iw)
        d_valid = Signal()
        d_index = Signal(iw)
        have_cts = cts.bit_select(k[:max(1, (steps_max - 1).bit_length())], 1) if steps_max > 1 \
            else cts[0]
        with m.If(running & cur.send & ~send_go & have_cts):
            m.d.sync += send_go.eq(1)
            m.d.comb += cts_clear.eq(Const(1, steps_max) << k)
        data_ready = Signal()
        advance = ~d_valid | data_ready
        issue = running & send_go & (send_idx < cur.send_count) & (send_idx < snapped) & advance
        m.d.comb += [sc_r.en.eq(advance), sc_r.addr.eq(send_idx)]
        with m.If(advance):
            m.d.sync += [d_valid.eq(issue), d_index.eq(cur.send_first + send_idx)]
        with m.If(issue):
            m.d.sync += send_idx.eq(send_idx + 1)

        entry_tag = Signal(eb) if eb else None
        next_tag = Signal(eb) if eb else None
        if eb:
            m.d.comb += [entry_tag.eq(k), next_tag.eq(k + 1)]
        send_done = ~cur.send | (send_go & (send_idx == cur.send_count) & ~d_valid)
        recv_cnt = Signal(iw)

        # Early CTS: once all that is left of entry k is local (its reduction pipeline drains),
        # the CTS of entry k + 1 may go; data for k + 1 then waits at most for that drain and
        # the load of k + 1 at the head of the receive buffer. Needs an entry bit in the tag.
        following = self.table_data  # entry k + 1 while entry k runs
        want_early = Signal()
        if eb:
            m.d.comb += want_early.eq(
                running & ~cts_todo & ~early & send_done
                & (~cur.recv | (recv_cnt == cur.recv_count)) & (k + 1 < steps))
        with m.If(want_early & ~following.recv):
            m.d.sync += early.eq(1)
        with m.If(self.start):
            m.d.sync += early.eq(0)

        # The flit is one continuous assignment of all its bits, from signals the branches
        # below drive, so that its constant fields (kind, hop, collective id) are constants of
        # that assignment: a field a process drives only with a constant becomes an
        # `always @*` block that reads nothing, which an event-driven simulator never runs.
        layout = self.tx.payload.shape()
        flit = SimpleNamespace(**{name: Signal(layout[name].shape, name=f"tx_{name}")
                                  for name in ("dst", "index", "payload", "tag")})
        parts = {"kind": Const(Kind.P2P.value, 2), "src": self.node_id, **vars(flit)}
        m.d.comb += Value.cast(self.tx.payload).eq(Cat(*(
            parts.get(name, Const(0, field.width))
            for name, field in sorted(layout, key=lambda item: item[1].offset))))
        with m.If(cts_todo):
            m.d.comb += [
                self.tx.valid.eq(1),
                flit.dst.eq(cur.recv_peer), flit.index.eq(k),
                flit.tag.eq(_tag(entry_tag, Message.CTS)),
            ]
            with m.If(self.tx.ready):
                m.d.sync += cts_todo.eq(0)
        with m.Elif(want_early & following.recv):
            m.d.comb += [
                self.tx.valid.eq(1),
                flit.dst.eq(following.recv_peer), flit.index.eq(k + 1),
                flit.tag.eq(_tag(next_tag, Message.CTS)),
            ]
            with m.If(self.tx.ready):
                m.d.sync += early.eq(1)
        with m.Else():
            m.d.comb += [
                self.tx.valid.eq(d_valid), data_ready.eq(self.tx.ready),
                flit.dst.eq(cur.send_peer), flit.index.eq(d_index), flit.payload.eq(sc_r.data),
                flit.tag.eq(_tag(entry_tag, Message.DATA)),
            ]

        # -- receive: reduce through the ALU, or copy -------------------------------------------
        m.submodules.alu = alu = ALU(mul=self._mul, tag_width=aw)
        head = self.rx_data.payload
        i = head.index
        pending = Signal(range(alu.latency + 3))
        in_range = (i >= cur.recv_first) & (i < cur.recv_first + cur.recv_count)
        right_entry = (head.tag[CLASS_BITS:] == entry_tag) if eb else Const(1)
        good = (running & cur.recv & in_range & (head.src == cur.recv_peer)
                & (head.kind == Kind.P2P) & right_entry & (recv_cnt < cur.recv_count))
        hazard = (cur.send & (i >= cur.send_first) & (i < cur.send_first + cur.send_count)
                  & ((i - cur.send_first)[:iw] >= snap_issued))
        # Data of the next entry (after an early CTS) waits until that entry is loaded.
        hold = Const(0)
        if eb:
            tag = head.tag[CLASS_BITS:]
            hold = early & ((running & (tag == next_tag)) | (loading & (tag == entry_tag)))
        accept = self.rx_data.valid & good & ~hazard & ~hold
        m.d.comb += self.rx_data.ready.eq(~hold & (~good | ~hazard))
        with m.If(self.rx_data.valid & ~good & ~hold):
            m.d.sync += st.error.eq(1)
        address = Signal(aw)
        m.d.comb += address.eq(base + i)
        s1_valid = Signal()
        s1_b = Signal(p.payload_width)
        s1_addr = Signal(aw)
        m.d.comb += self.rd2_addr.eq(address)
        m.d.sync += [s1_valid.eq(accept & cur.reduce), s1_b.eq(head.payload),
                     s1_addr.eq(address)]
        m.d.comb += [alu.en.eq(1), alu.i_valid.eq(s1_valid), alu.i_op.eq(op),
                     alu.i_dtype.eq(dtype), alu.i_a.eq(self.rd2_data), alu.i_b.eq(s1_b),
                     alu.i_tag.eq(s1_addr)]
        with m.If(alu.o_valid):
            m.d.comb += [self.wr_en.eq(1), self.wr_addr.eq(alu.o_tag),
                         self.wr_data.eq(alu.o_result)]
            with m.If(alu.o_unsupported):
                m.d.sync += st.error.eq(1)
        with m.Elif(accept & ~cur.reduce):
            m.d.comb += [self.wr_en.eq(1), self.wr_addr.eq(address),
                         self.wr_data.eq(head.payload)]
        with m.If(accept):
            m.d.sync += recv_cnt.eq(recv_cnt + 1)
        m.d.sync += pending.eq(pending + (accept & cur.reduce) - alu.o_valid)
        recv_done = ~cur.recv | ((recv_cnt == cur.recv_count) & (pending == 0))

        m.d.comb += complete.eq(running & ~cts_todo & send_done & recv_done)

        # -- per-entry state reset ---------------------------------------------------------------
        with m.If(loading):
            m.d.sync += [snap_issued.eq(0), snapped.eq(0), send_go.eq(0), send_idx.eq(0),
                         d_valid.eq(0), recv_cnt.eq(0)]
        return m
