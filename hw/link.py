"""Both ends of a credit-flow-controlled link, for blocks that talk to a switch port.

A switch port is a pair of :func:`innet.hw.flit.link_signature` channels. An endpoint (or any
block on the local port) sends with a :class:`LinkSender` and receives with a
:class:`LinkReceiver`; they implement the protocol documented in
:func:`~innet.hw.flit.link_signature` exactly as the switch does (PIUMA, "Pipelined
Reduction": credit-based flow control between neighbours).

Wiring an endpoint to switch ``sw`` (local port ``radix``)::

    tx = LinkSender(sw.params, depth=sw.buffer_depth, inputs=2)   # sw's input buffers
    rx = LinkReceiver(sw.params, depth=sw.local_depth)            # sw counts these credits
    wiring.connect(m, tx.link, sw.i[sw.radix])
    wiring.connect(m, sw.o[sw.radix], rx.link)
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.hw.arbiter import RoundRobin, any_of, onehot_mux
from innet.hw.buffer import Buffer
from innet.hw.credit import CreditCounter
from innet.hw.flit import FlitParams, Kind, link_signature, stream_signature

__all__ = ["LinkReceiver", "LinkSender"]


def _check(params, depth, name="Depth"):
    if not isinstance(params, FlitParams):
        raise TypeError(f"Params must be a FlitParams, not {params!r}")
    check_int(name, depth, low=1)


class LinkSender(wiring.Component):
    """Sends flits from ready/valid streams onto a link, holding one credit counter per VC.

    Each cycle one head flit whose VC holds a credit is registered onto the link: collective
    flits before p2p flits, round-robin among inputs within a class. One flit per cycle.

    Parameters
    ----------
    params : FlitParams
        The flit format.
    depth : int
        The receiver's buffer depth per VC (a switch's ``buffer_depth``): the counters' start.
    inputs : int
        Number of input streams.

    Members
    -------
    i : In(stream_signature(params)).array(inputs)
        Flits to send; ``ready`` is high in the cycle a flit is taken (it depends on ``valid``
        and on the flit's VC holding a credit).
    link : Out(link_signature(params))
        The link; ``valid``/``payload`` are registers (the flit is on the link the cycle after
        it was taken).
    credits : Out(range(depth + 1)).array(params.vcs)
        Credits held per VC (for status and testbenches).
    """

    def __init__(self, params: FlitParams, depth: int, inputs: int = 1) -> None:
        _check(params, depth)
        _check(params, inputs, "Inputs")
        self._params, self._depth, self._inputs = params, depth, inputs
        super().__init__({
            "i": In(stream_signature(params)).array(inputs),
            "link": Out(link_signature(params)),
            "credits": Out(range(depth + 1)).array(params.vcs),
        })

    def elaborate(self, platform):
        m = Module()
        p, n = self._params, self._inputs
        counters = [CreditCounter(self._depth) for _ in range(p.vcs)]
        for v, c in enumerate(counters):
            m.submodules[f"credit{v}"] = c
            m.d.comb += [c.give.eq(self.link.credit[v]), self.credits[v].eq(c.count)]
        available = Cat(c.available for c in counters)
        oks, colls, vcs = [], [], []
        for k, s in enumerate(self.i):
            vc = Signal(range(p.vcs), name=f"i{k}_vc")
            ok = Signal(name=f"i{k}_ok")
            m.d.comb += [vc.eq(p.vc_of(s.payload)), ok.eq(s.valid & available.bit_select(vc, 1))]
            oks.append(ok)
            colls.append(ok & (s.payload.kind != Kind.P2P))
            vcs.append(vc)
        rr = RoundRobin(n)
        m.submodules.arbiter = rr
        coll = Cat(*colls)
        m.d.comb += [rr.requests.eq(Mux(coll.any(), coll, Cat(*oks))), rr.take.eq(1)]
        m.d.sync += self.link.valid.eq(rr.grant.any())
        for k, s in enumerate(self.i):
            m.d.comb += s.ready.eq(rr.grant[k])
        with m.If(rr.grant.any()):
            m.d.sync += self.link.payload.eq(onehot_mux(rr.grant, [s.payload for s in self.i]))
        for v, c in enumerate(counters):
            m.d.comb += c.take.eq(any_of(rr.grant[k] & (vcs[k] == v) for k in range(n)))
        return m




class LinkReceiver(wiring.Component):
    """Receives a link into one buffer per VC and returns a credit for every flit popped.

    Parameters
    ----------
    params : FlitParams
        The flit format.
    depth : int
        Buffer entries per VC (the sender's credits; a switch's ``local_depth`` when this
        receives its local port).

    Members
    -------
    link : In(link_signature(params))
        The link; ``credit`` is registered (pulses the cycle after the pop).
    o : Out(stream_signature(params)).array(params.vcs)
        The head flit of each VC's buffer (a flit is readable the cycle after it was on the
        link). P2P flits from a switch always arrive on VC 0 (``hop = 0``).
    overflow : Out(1)
        Sticky: a flit arrived for a full buffer (the sender ignored its credits).
    """

    def __init__(self, params: FlitParams, depth: int) -> None:
        _check(params, depth)
        self._params, self._depth = params, depth
        super().__init__({
            "link": In(link_signature(params)),
            "o": Out(stream_signature(params)).array(params.vcs),
            "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self._params
        vc = Signal(range(p.vcs))
        m.d.comb += vc.eq(p.vc_of(self.link.payload))
        pops = []
        for v in range(p.vcs):
            buf = Buffer(p.layout, self._depth)
            m.submodules[f"buf{v}"] = buf
            m.d.comb += [buf.w.valid.eq(self.link.valid & (vc == v)),
                         buf.w.payload.eq(self.link.payload)]
            with m.If(buf.w.valid & ~buf.w.ready):
                m.d.sync += self.overflow.eq(1)
            wiring.connect(m, buf.r, wiring.flipped(self.o[v]))
            pops.append(buf.r.valid & buf.r.ready)
        m.d.sync += self.link.credit.eq(Cat(*pops))
        return m
