"""The collective path of a switch: request and response flits on the collective VCs.

This is the boundary between the switch fabric and the collective path. The switch hands
this block every request flit as it arrives (the block keeps the request buffers), the head of
every response buffer and the per-id configuration; the block decides, every cycle, which
collective flits leave on which output ports. The switch gives collective flits strict
priority over p2p at every output (PIUMA, "Collective Virtual Channel"), owns the output
registers and the credit counters, and returns a credit upstream for every flit this block
makes room for.

Two blocks keep this contract (the ``collective`` argument of
:class:`innet.hw.switch.SwitchCore` chooses one):

- :class:`innet.hw.ceng.CollectiveEngine`, the switch's default: waits for a flit of an id on
  every port of ``req_in``, takes one of each, reduces them with ``hw.alu`` through a pipelined
  tree in a fixed port order and forwards one flit (PIUMA, "Collective Engine").
- :class:`CollectivePath`, the pass-through: it forwards each request flit unchanged toward
  the root, turns request flits into responses at the root, and multicasts responses (PIUMA,
  "Request-response Mechanism"); no reduction. Kept for fabric tests and as the reference of
  the routing part.

Interface contract (for any replacement)
----------------------------------------
- ``req[p]`` (valid, payload) is the request flit arriving on input port ``p`` this cycle
  (``kind == REQ``, ``cid`` below ``collective_ids``; no ready). The block keeps the request
  buffers: ``depth`` flits per (id, port), the credits the upstream sender holds, and
  ``req_pop[c]`` bit ``p`` pulses once for every flit of id ``c`` from port ``p``, when the
  block has room for another (when it takes the flit from the buffer, or discards it); the
  switch returns that credit upstream. A flit that finds its (id, port) buffer
  full is not kept and ``req_refused`` pulses (the sender broke the credit protocol).
- ``resp[p]`` is the head of the response buffer of input port ``p`` (flits of any id).
- ``config[c]`` holds the per-id registers (:func:`config_layout`); a register write takes
  effect from the next cycle.
- ``credit_req[c]`` bit ``o``: output ``o`` holds a credit of the request VC of id ``c``;
  ``credit_resp`` bit ``o``: output ``o`` holds a credit of the response VC.
- ``send[o]`` (valid, payload): the flit output ``o`` sends this cycle. Only allowed when
  output ``o`` holds a credit of the flit's VC (:meth:`FlitParams.vc`); the switch registers
  it onto the link and takes the credit. A multicast is several ``send`` in the same cycle.
  The switch allocates p2p in parallel and gives ``o`` to p2p only when ``send[o].valid`` is
  low, so ``send`` never waits for p2p; keep the logic in front of ``send`` short (register
  the reduction tree's output), it is on the switch's critical path.
- ``dropped``: pulses when a flit is discarded because its configuration names no target.
- ``mismatch``: pulses when request flits at the heads of one id carry different element
  indices and the oldest of them are discarded to bring the streams back in step;
  ``unsupported``: pulses when an element is discarded because its id's operation is not
  defined on its data type. Always 0 in the pass-through.
- ``abort[c]``: while high, every flit of id ``c`` that reaches the block (request and response
  heads, and results the block holds) is discarded without a flag, and the id's watchdog is
  cleared; the way to drain an id that can no longer complete.
- ``busy[c]``: a flit of id ``c`` is in the block, in its request buffers or at the head of a
  response buffer (registered; the configuration interlock of
  :class:`innet.hw.switch.Switch`).
- ``timeout``: cycles a reducing id may wait with some but not all of its contributors present
  before its watchdog fires (0: never). ``stalled`` pulses when a watchdog fires;
  ``timed_out[c]`` stays high from then until ``abort[c]``, and ``missing[c]`` holds the
  contributing ports that were missing when it fired. Always 0 in the pass-through.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from innet.gen.checks import check_int
from innet.hw.arbiter import ConflictArbiter, RoundRobin, any_of, onehot_mux
from innet.hw.buffer import Buffer
from innet.hw.credit import CREDIT_ROUND_TRIP
from innet.hw.flit import FlitParams, Kind, bits_for, stream_signature

__all__ = ["TIMEOUT_BITS", "CollectivePath", "config_layout", "path_members", "send_signature"]

#: Bits of the watchdog's ``timeout`` (cycles; the ``coll_timeout`` register).
TIMEOUT_BITS = 16


def path_members(params: FlitParams, radix: int) -> dict:
    """The signature members of a collective path (the contract above), for ``super().__init__``
    of any block that keeps it."""
    ids, ports = params.collective_ids, radix + 1
    return {
        "req": In(send_signature(params)).array(ports),
        "req_pop": Out(ports).array(ids),
        "req_refused": Out(1),
        "resp": In(stream_signature(params)).array(ports),
        "config": In(config_layout(radix)).array(ids),
        "credit_req": In(ports).array(ids),
        "credit_resp": In(ports),
        "send": Out(send_signature(params)).array(ports),
        "dropped": Out(1),
        "mismatch": Out(1),
        "unsupported": Out(1),
        "abort": In(ids),
        "busy": Out(ids),
        "timeout": In(TIMEOUT_BITS),
        "stalled": Out(1),
        "timed_out": Out(ids),
        "missing": Out(ports).array(ids),
    }


def config_layout(radix: int) -> data.StructLayout:
    """Per-collective-id configuration as the switch's collective path sees it.

    The fields mirror the ``coll[c]`` registers of :func:`innet.gen.regmap.switch_map` (port
    masks have bit ``i`` for network port ``i`` and bit ``radix`` for the local port; ports are
    numbered ``0 .. radix``, ``radix`` being local):

    ``enable`` (1)
        The id is configured on this switch; flits of a disabled id are discarded.
    ``op`` (4), ``dtype`` (2)
        :class:`innet.gen.ops.Op` and :class:`innet.gen.ops.DType` codes for the reduction.
    ``req_in`` (radix + 1)
        Ports that contribute request flits (used by the reduction; the pass-through forwards
        requests from any port).
    ``req_out`` (bits for radix + 1)
        Port toward the root; ignored at the root.
    ``root`` (1)
        This switch is the root: requests become responses multicast to ``resp_out``.
    ``resp_in`` (bits for radix + 1)
        Port responses arrive on (the pass-through multicasts responses from any port).
    ``resp_out`` (radix + 1)
        Ports responses are multicast to (the local port included where the result is
        delivered).
    """
    ports = radix + 1
    return data.StructLayout({
        "enable": 1,
        "op": 4,
        "dtype": 2,
        "req_in": ports,
        "req_out": bits_for(ports),
        "root": 1,
        "resp_in": bits_for(ports),
        "resp_out": ports,
    })


def send_signature(params: FlitParams) -> wiring.Signature:
    """A flit of this cycle, ``valid`` and ``payload`` with no ready: an output's collective
    flit, or a request flit arriving at the collective path."""
    return wiring.Signature({"valid": Out(1), "payload": Out(params.layout)})


def _decode(value, width: int):
    """One-hot of ``value`` in ``width`` bits (zero when ``value >= width``)."""
    return Cat(*(value == i for i in range(width)))


class CollectivePath(wiring.Component):
    """Pass-through collective path (no reduction): routes collective flits by the registers.

    Requests of id ``c`` are forwarded one at a time (round-robin over input ports) to
    ``config[c].req_out``; at the root (``config[c].root``) they leave as response flits
    (``kind = RESP``) multicast to ``config[c].resp_out``. Response flits are multicast to
    ``config[cid].resp_out`` of their id. A multicast leaves only when every target holds a
    credit, all copies in the same cycle. Sources that want overlapping outputs are served in
    least-recently-granted order (:class:`~innet.hw.arbiter.ConflictArbiter`), so no id and no
    port starves. A flit whose configuration names no target (``resp_out`` empty, ``req_out``
    not a port, the id not enabled) is discarded and ``dropped`` pulses.

    The request buffers are one :class:`~innet.hw.buffer.Buffer` per (id, port).

    Latency: the flit is on ``send`` in the same cycle it is at the head of its buffer.

    Parameters
    ----------
    params : FlitParams
        The flit format (collective ids, widths).
    radix : int
        Network ports of the switch (the local port is ``radix``).
    depth : int
        Request flits per (id, port): the credits of the request VCs (default
        :data:`~innet.hw.credit.CREDIT_ROUND_TRIP`).

    Members
    -------
    See the module docstring for the contract; shapes:
    ``req`` In(send_signature).array(radix + 1), ``req_pop`` Out(radix + 1).array(collective_ids),
    ``req_refused`` Out(1), ``resp`` In(stream).array(radix + 1),
    ``config`` In(config_layout(radix)).array(collective_ids),
    ``credit_req`` In(radix + 1).array(collective_ids), ``credit_resp`` In(radix + 1),
    ``send`` Out(send_signature).array(radix + 1), ``dropped`` Out(1), ``mismatch`` Out(1),
    ``unsupported`` Out(1) (both always 0 here), ``abort`` In(collective_ids), ``busy``
    Out(collective_ids), ``timeout`` In(TIMEOUT_BITS) (unused here), ``stalled`` Out(1),
    ``timed_out`` Out(collective_ids), ``missing`` Out(radix + 1).array(collective_ids) (all
    three always 0 here).
    """

    def __init__(self, params: FlitParams, radix: int, depth: int = CREDIT_ROUND_TRIP) -> None:
        if not isinstance(params, FlitParams):
            raise TypeError(f"Params must be a FlitParams, not {params!r}")
        check_int("Radix", radix, low=1)
        check_int("Request buffer depth", depth, low=1)
        self._params = params
        self._radix = radix
        self._depth = depth
        super().__init__(path_members(params, radix))

    @property
    def params(self) -> FlitParams:
        return self._params

    @property
    def radix(self) -> int:
        return self._radix

    @property
    def depth(self) -> int:
        return self._depth

    def elaborate(self, platform):
        m = Module()
        p = self._params
        ids, ports = p.collective_ids, self._radix + 1
        layout = p.layout

        # Sources: one per collective id (its requests), then one per input port (responses).
        sources = ids + ports
        valid = [Signal(name=f"src{s}_valid") for s in range(sources)]
        targets = [Signal(ports, name=f"src{s}_targets") for s in range(sources)]
        flit = [Signal(layout, name=f"src{s}_flit") for s in range(sources)]
        ok = [Signal(name=f"src{s}_ok") for s in range(sources)]
        pops = [Signal(name=f"src{s}_pop") for s in range(sources)]
        dropped = []

        # The request buffers: one per (id, port).
        refused = []
        buffers = [[Buffer(layout, self._depth) for _ in range(ports)] for _ in range(ids)]
        for c, row in enumerate(buffers):
            for q, buf in enumerate(row):
                m.submodules[f"req{c}_buf{q}"] = buf
                arriving = self.req[q]
                m.d.comb += [buf.w.valid.eq(arriving.valid & (arriving.payload.cid == c)),
                             buf.w.payload.eq(arriving.payload),
                             self.req_pop[c][q].eq(buf.r.valid & buf.r.ready)]
                refused.append(buf.w.valid & ~buf.w.ready)
        m.d.comb += self.req_refused.eq(any_of(refused))

        # Request sources: round-robin over the input ports holding a request of id c.
        for c in range(ids):
            cfg = self.config[c]
            rr = RoundRobin(ports)
            m.submodules[f"req_rr{c}"] = rr
            heads = [buf.r for buf in buffers[c]]
            m.d.comb += rr.requests.eq(Cat(*(h.valid for h in heads)))
            head = Signal(layout, name=f"req{c}_head")
            m.d.comb += head.eq(onehot_mux(rr.grant, [h.payload for h in heads]))
            for i, h in enumerate(heads):
                m.d.comb += h.ready.eq(rr.grant[i] & pops[c] | self.abort[c])
            resp_here = any_of(h.valid & (h.payload.cid == c) for h in self.resp)
            m.d.sync += self.busy[c].eq(any_of(h.valid for h in heads) | resp_here)
            m.d.comb += [
                valid[c].eq(any_of(h.valid for h in heads) & ~self.abort[c]),
                rr.take.eq(pops[c]),
                targets[c].eq(Mux(cfg.enable,
                                  Mux(cfg.root, cfg.resp_out, _decode(cfg.req_out, ports)), 0)),
                flit[c].eq(head),
            ]
            with m.If(cfg.root):
                m.d.comb += flit[c].kind.eq(Kind.RESP)
            credits = Mux(cfg.root, self.credit_resp, self.credit_req[c])
            m.d.comb += ok[c].eq((targets[c] & ~credits) == 0)

        # Response sources: the head of each port's response buffer, multicast by its id.
        for i, h in enumerate(self.resp):
            s = ids + i
            mask = Signal(ports, name=f"resp{i}_mask")
            m.d.comb += mask.eq(onehot_mux(
                [(h.payload.cid == c) & self.config[c].enable for c in range(ids)],
                [self.config[c].resp_out for c in range(ids)]))
            aborted = onehot_mux([h.payload.cid == c for c in range(ids)],
                                 [self.abort[c] for c in range(ids)])
            m.d.comb += [
                valid[s].eq(h.valid & ~aborted),
                targets[s].eq(mask),
                flit[s].eq(h.payload),
                ok[s].eq((mask & ~self.credit_resp) == 0),
                h.ready.eq(pops[s] | aborted),
            ]

        # Arbitration among sources with every target credited; empty target sets drop.
        arb = ConflictArbiter(sources, ports)
        m.submodules.arbiter = arb
        eligible = [Signal(name=f"src{s}_eligible") for s in range(sources)]
        for s in range(sources):
            drop = Signal(name=f"src{s}_drop")
            m.d.comb += [
                eligible[s].eq(valid[s] & ok[s] & targets[s].any()),
                drop.eq(valid[s] & ~targets[s].any()),
                arb.requests[s].eq(eligible[s]),
                arb.targets[s].eq(targets[s]),
                pops[s].eq(arb.grant[s] | drop),
            ]
            dropped.append(drop)
        m.d.comb += self.dropped.eq(any_of(dropped))

        for o in range(ports):
            send = self.send[o]
            picks = [arb.grant[s] & targets[s][o] for s in range(sources)]
            m.d.comb += [send.valid.eq(any_of(picks)), send.payload.eq(onehot_mux(picks, flit))]
        return m


