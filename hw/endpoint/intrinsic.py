"""The collective intrinsic: an in-network collective command of one endpoint.

PIUMA, "Logical Computation": "Computation is initiated when participating cores call the
collective intrinsic, specifying the input vector address and the number of elements m.
Thereafter, switches fragment input elements into request packets and insert them into the
reduction tree. [...] A counter [...] tracks the number of output elements written to the local
memory endpoint. When all m elements are written, it notifies the core that the collective
computation is locally completed." Here the endpoint does the fragmenting: one request flit per
element, the element index in the flit.
"""

from __future__ import annotations

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from innet.gen.regmap import CollectiveMode
from innet.hw.flit import FlitParams, Kind, stream_signature

__all__ = ["Intrinsic", "status_layout"]


def status_layout() -> data.StructLayout:
    """``busy``, ``done``, ``error``: the ``status`` registers of the endpoint map."""
    return data.StructLayout({"busy": 1, "done": 1, "error": 1})


class Intrinsic(wiring.Component):
    """Streams a vector into request flits and writes the response flits back.

    On ``start`` (a one-cycle strobe) the command (``cid``, ``mode``, ``count``, ``base``) is
    latched. In the modes that send (:class:`~innet.gen.regmap.CollectiveMode` ``BOTH``,
    ``SEND``) element ``j`` of ``memory[base .. base + count)`` leaves as a request flit
    (``kind = REQ``, ``cid``, ``index = j``, ``payload`` the element), one per cycle when the
    link takes it; in the modes that receive (``BOTH``, ``RECV``) each response flit of the
    collective id is written to ``memory[base + index]``. ``BARRIER`` sends one request (element
    0, payload 0) and waits for one response, without touching the memory. ``done`` rises when
    everything was sent and received.

    Timing: a start that is taken in a mode that sends (with ``count`` at least 1) reads
    element 0 in its own cycle, so the first request is offered in the next cycle; ``done``
    rises (and ``busy`` falls) in the cycle after the last request is taken or the last
    response written, whichever is later.

    Parameters
    ----------
    params : FlitParams
        The flit format.
    vector_depth : int
        Elements of the vector memory.

    Members
    -------
    start : In(1)
        Start strobe. Refused (``error`` set, ``done`` cleared, nothing new runs) while
        ``blocked`` or ``busy``.
    cid, mode : In
        Collective id and :class:`~innet.gen.regmap.CollectiveMode` code.
    count : In(vector_depth.bit_length())
        Elements.
    base : In(vector_depth.bit_length())
        First element of the vector in the memory.
    blocked : In(1)
        Another user owns the memory (the step engine runs).
    status : Out(status_layout())
        ``busy`` from the cycle after ``start`` until ``done``; ``done`` until the next
        start; ``error`` (sticky until the next start): a refused start, or a response flit
        that does not belong to the running command (other id, index beyond ``count``, more
        than ``count``); such flits are discarded.
    sent, received : Out(vector_depth.bit_length())
        Request flits taken by the link and response flits accepted since the start.
    tx : Out(stream_signature(params))
        Request flits.
    rx : In(stream_signature(params))
        Response flits (the endpoint's response buffer), taken one per cycle while ``busy``.
        While no command runs they wait in the buffer, and the response tree stops behind them
        (credits): a receiver may start after the root has sent. A command takes whatever
        responses are waiting, so the host must not start a command while responses of
        another command may still arrive.
    rd_addr, rd_en, rd_data
        A synchronous read port of the vector memory (data one cycle after an enabled address;
        held while ``rd_en`` is low). Used only while ``reading``.
    reading : Out(1)
        The read port is in use: while ``busy``, and in the cycle of a start that is taken in
        a mode that sends (the first element is read then, so its flit is offered in the next
        cycle).
    wr_addr, wr_data, wr_en
        A write port of the vector memory. Used only while ``busy``.
    """

    def __init__(self, params: FlitParams, vector_depth: int) -> None:
        self._params = params
        self._depth = vector_depth
        iw = vector_depth.bit_length()
        aw = max(1, (vector_depth - 1).bit_length())
        self._aw = aw
        super().__init__({
            "start": In(1), "cid": In(params.cid_width), "mode": In(2), "count": In(iw),
            "base": In(iw), "blocked": In(1),
            "status": Out(status_layout()), "sent": Out(iw), "received": Out(iw),
            "tx": Out(stream_signature(params)), "rx": In(stream_signature(params)),
            "rd_addr": Out(aw), "rd_en": Out(1), "rd_data": In(params.payload_width),
            "reading": Out(1),
            "wr_addr": Out(aw), "wr_data": Out(params.payload_width), "wr_en": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        iw = self._depth.bit_length()
        st = self.status
        cid = Signal.like(self.cid)
        mode = Signal(2)
        total = Signal(iw)
        base = Signal(iw)
        sends = Signal()
        recvs = Signal()
        barrier = mode == CollectiveMode.BARRIER
        m.d.comb += [
            sends.eq(mode != CollectiveMode.RECV),
            recvs.eq(mode != CollectiveMode.SEND),
        ]

        # Start and refusal. A start that is taken reads the first element in its own cycle
        # (``launch``), so that its flit is offered in the next.
        accepted = self.start & ~self.blocked & ~st.busy
        launch = Signal()
        first_total = Mux(self.mode == CollectiveMode.BARRIER, 1, self.count)
        m.d.comb += [
            launch.eq(accepted & (self.mode != CollectiveMode.RECV) & (first_total != 0)),
            self.reading.eq(st.busy | launch),
        ]
        with m.If(self.start):
            with m.If(self.blocked | st.busy):
                m.d.sync += [st.error.eq(1), st.done.eq(0)]
            with m.Else():
                m.d.sync += [
                    st.busy.eq(1), st.done.eq(0), st.error.eq(0),
                    cid.eq(self.cid), mode.eq(self.mode), base.eq(self.base),
                    total.eq(first_total), self.sent.eq(0), self.received.eq(0),
                ]

        # Send: a read-ahead of one element, stalled with the read port's enable.
        following = Signal(iw)
        out_valid = Signal()
        out_index = Signal(iw)
        advance = ~out_valid | self.tx.ready
        issue = st.busy & sends & (following < total) & advance
        m.d.comb += [self.rd_en.eq(advance | launch),
                     self.rd_addr.eq(Mux(launch, self.base, base + following))]
        with m.If(advance):
            m.d.sync += [out_valid.eq(issue), out_index.eq(following)]
        with m.If(issue):
            m.d.sync += following.eq(following + 1)
        with m.If(accepted):
            m.d.sync += [following.eq(launch), out_valid.eq(launch), out_index.eq(0)]
        flit = self.tx.payload
        took = self.tx.valid & self.tx.ready
        m.d.comb += [
            self.tx.valid.eq(out_valid),
            flit.kind.eq(Kind.REQ), flit.cid.eq(cid), flit.index.eq(out_index),
            flit.payload.eq(Mux(barrier, Const(0), self.rd_data)),
        ]
        with m.If(took):
            m.d.sync += self.sent.eq(self.sent + 1)

        # Receive: write each response to its element; while no command runs, responses wait
        # (a broadcast receiver may start after the root).
        resp = self.rx.payload
        m.d.comb += self.rx.ready.eq(st.busy)
        fits = (st.busy & recvs & (resp.kind == Kind.RESP) & (resp.cid == cid)
                & (resp.index < total) & (self.received < total))
        written = self.rx.valid & fits
        with m.If(self.rx.valid & st.busy):
            with m.If(fits):
                m.d.sync += self.received.eq(self.received + 1)
                m.d.comb += [self.wr_en.eq(~barrier), self.wr_addr.eq(base + resp.index),
                             self.wr_data.eq(resp.payload)]
            with m.Else():
                m.d.sync += st.error.eq(1)

        # Completion: in the cycle the last flit is taken or the last response written.
        sent_all = (self.sent == total) | (took & (self.sent == total - 1))
        received_all = (self.received == total) | (written & (self.received == total - 1))
        with m.If(st.busy & (~sends | sent_all) & (~recvs | received_all)):
            m.d.sync += [st.busy.eq(0), st.done.eq(1)]
        return m
